/**
 * Child process of scheduled-processes.spec.ts: one instance of an application with five jobs,
 * each a real `@Cron` of @nestjs/schedule every second under `@ScheduledLock`, on Redis.
 * argv: redisUrl keyPrefix name delaysJson — delays (ms) by which this instance's invocation of
 * each job (a–e) starts late (Skewed). Prints `ready`; `try <job> <tick> <name> <ms>` as it
 * tries to run a job (takes its lock), `run ...` as the run starts (holds the lock) and, for jobs
 * a–c, `end ...` as it ends; `hang d <tick>` and `lost d <message>` for job d; `warn <message>`
 * for each warning.
 * Reads `arm` on stdin: its next run of job d hangs forever (a promise that never settles).
 */
import 'reflect-metadata';
import { Injectable, Module, type LoggerService } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { Cron, ScheduleModule, type CronOptions } from '@nestjs/schedule';
import { createInterface } from 'node:readline';
import { LockService, RedisLockModule, ScheduledLock, type ScheduledLockOptions } from '../../lib';
import { Skewed } from '../support/skewed-tick';

const [url, keyPrefix, name, delaysJson] = process.argv.slice(2);
const delays = JSON.parse(delaysJson) as Record<'a' | 'b' | 'c' | 'd' | 'e', number>;
/** Set by `arm`: the next run of job d hangs. */
let hangNext = false;

const print = (line: string) => process.stdout.write(`${line}\n`);
const event = (what: 'try' | 'run' | 'end', job: string, tick: number) =>
  print(`${what} ${job} ${tick} ${name} ${Date.now()}`);
const ran = (job: string, tick: number) => event('run', job, tick);
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Job `job` of this instance: a `@Cron` every second (with `cron`), started `delays[job]` ms late
 * (`@Skewed`), under `@ScheduledLock` on `job:<job>` (with `lock`).
 */
function EverySecond(
  job: keyof typeof delays,
  lock: ScheduledLockOptions = {},
  cron: CronOptions = {},
): MethodDecorator {
  const scheduled = ScheduledLock({ key: `job:${job}`, ...lock }) as MethodDecorator;
  // Applied innermost first, as stacked decorators are.
  const decorators = [
    scheduled,
    Skewed(
      () => delays[job],
      (tick) => event('try', job, tick),
    ),
    Cron('* * * * * *', cron),
  ];
  return (target, key, descriptor) => {
    let decorated = descriptor;
    for (const decorate of decorators) decorated = decorate(target, key, decorated) ?? decorated;
    return decorated;
  };
}

@Injectable()
class Jobs {
  constructor(private readonly locks: LockService) {}

  /** 5 ms, kept 700 ms. */
  @EverySecond('a', { holdAtLeast: 700 })
  async a(tick?: number): Promise<void> {
    ran('a', tick!);
    await sleep(5);
    event('end', 'a', tick!);
  }

  /** 500 ms, kept 700 ms. */
  @EverySecond('b', { holdAtLeast: 700 })
  async b(tick?: number): Promise<void> {
    ran('b', tick!);
    await sleep(500);
    event('end', 'b', tick!);
  }

  /** 5 ms, released at once: a late instance runs the tick again. */
  @EverySecond('c')
  async c(tick?: number): Promise<void> {
    ran('c', tick!);
    await sleep(5);
    event('end', 'c', tick!);
  }

  /** 5 ms, or hangs once armed; capped by maxHold. The cron waits for a run to complete. */
  // The cron library skips a tick that fires more than `threshold` late (250 ms by default):
  // on a loaded machine that skipped the next tick the test waits for; d and e allow 1 s.
  @EverySecond('d', { maxHold: 2_000 }, { waitForCompletion: true, threshold: 1_000 })
  async d(tick?: number): Promise<void> {
    ran('d', tick!);
    if (!hangNext) {
      await sleep(5);
      return;
    }
    hangNext = false;
    const signal = this.locks.current()!.signal;
    signal.addEventListener('abort', () => print(`lost d ${(signal.reason as Error).message}`));
    print(`hang d ${tick}`);
    await new Promise(() => undefined);
  }

  /** Runs until the process is killed. */
  @EverySecond('e', {}, { threshold: 1_000 })
  async e(tick?: number): Promise<void> {
    ran('e', tick!);
    await sleep(600_000);
  }
}

/** Prints warnings and errors as lines (the rest stays quiet). */
const logger: LoggerService = {
  log: () => undefined,
  debug: () => undefined,
  verbose: () => undefined,
  warn: (message: unknown) => print(`warn ${String(message)}`),
  error: (message: unknown) => print(`error ${String(message)}`),
};

async function main() {
  @Module({
    imports: [
      ScheduleModule.forRoot(),
      RedisLockModule.forRoot({ redis: url, keyPrefix, leaseTime: 1_500 }),
    ],
    providers: [Jobs],
  })
  class ChildModule {}
  await NestFactory.createApplicationContext(ChildModule, { logger });
  createInterface({ input: process.stdin }).on('line', (line) => {
    if (line === 'arm') hangNext = true;
  });
  print('ready');
}

main().catch((error: unknown) => {
  process.stderr.write(`scheduled-child failed: ${String(error)}\n`);
  process.exit(1);
});
