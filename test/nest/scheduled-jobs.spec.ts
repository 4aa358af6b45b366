import { Inject, Injectable, type INestApplication } from '@nestjs/common';
import { Cron, ScheduleModule, SchedulerRegistry } from '@nestjs/schedule';
import { Test } from '@nestjs/testing';
import { randomUUID } from 'node:crypto';
import { Locked, RedisLockModule } from '../../lib';
import { suiteRedis } from '../support/suite-redis';
import { CapturingLogger } from './nest-kit';
import { sleep, until } from '../../tools/time';

const INSTANCE = 'instance name';
const SKIPPED = 'Skipped: lock "job:sweep" was busy after 0 ms.';

/** One run of the job: which instance ran it, in which second (the cron tick). */
interface Run {
  instance: string;
  tick: number;
}
const runs: Run[] = [];

@Injectable()
class SweepJob {
  constructor(@Inject(INSTANCE) private readonly instance: string) {}

  /** Every second on every instance; the lock lets one run per tick and skips the others. */
  @Cron('* * * * * *')
  @Locked('job:sweep', { waitTime: 0, onBusy: 'skip' })
  async sweep(): Promise<void> {
    runs.push({ instance: this.instance, tick: Math.floor(Date.now() / 1000) });
    await sleep(300); // the sweep's work: longer than the instances' timer skew
  }
}

describe('a distributed cron job with @nestjs/schedule', () => {
  const server = suiteRedis();
  const logger = new CapturingLogger();
  /** The tick (second) of each skip line logged. */
  const skipTicks = () =>
    logger.lines
      .filter((line) => line.message === SKIPPED)
      .map((line) => Math.floor(line.at / 1000));
  const prefix = `t:${randomUUID().slice(0, 8)}:`;
  const apps: INestApplication[] = [];
  afterAll(async () => {
    await Promise.all(apps.map((app) => app.close()));
  });

  async function instance(name: string): Promise<INestApplication> {
    const moduleRef = await Test.createTestingModule({
      imports: [
        ScheduleModule.forRoot(),
        RedisLockModule.forRoot({ redis: server.redis.url, keyPrefix: prefix }),
      ],
      providers: [SweepJob, { provide: INSTANCE, useValue: name }],
    }).compile();
    const app = moduleRef.createNestApplication({ logger });
    await app.init();
    apps.push(app);
    return app;
  }

  it('runs each tick once across two instances and skips quietly on the other', async () => {
    await instance('a');
    await instance('b');
    const firstTick = Math.floor(Date.now() / 1000) + 1; // both instances scheduled from here on
    const counted = () => runs.filter((run) => run.tick >= firstTick);
    // The other instance tries a tick a millisecond or two after the one that runs it: wait for
    // its skip of each tick too, then stop the crons, so no tick starts while the apps close.
    await until(() => {
      const ticks = counted().map((run) => run.tick);
      const skipped = skipTicks();
      return ticks.length >= 3 && ticks.every((tick) => skipped.includes(tick));
    }, 10_000);
    for (const app of apps) {
      for (const job of app.get(SchedulerRegistry).getCronJobs().values()) void job.stop();
    }
    const ticks = counted().map((run) => run.tick);
    await Promise.all(apps.splice(0).map((app) => app.close()));

    expect(new Set(ticks).size).toBe(ticks.length); // never twice in one tick
    const skipped = logger.at('debug').filter((line) => line === SKIPPED);
    expect(skipped.length).toBeGreaterThanOrEqual(ticks.length); // the other instance tried each tick
    expect(logger.at('error')).toEqual([]);
    expect(logger.at('warn')).toEqual([]);
  });
});
