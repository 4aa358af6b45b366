import type { INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { Redis } from 'ioredis';
import { LockService } from 'nestjs-redis-lock';
import { setTimeout as sleep } from 'node:timers/promises';
import { filter, firstValueFrom } from 'rxjs';
import { AppModule } from './app.module';
import type { AppConfig } from './config';
import { ms, type Check } from './demo-http';
import { OUTBOX_RELAY } from './outbox-relay';

/** How long both instances run before the leader is shut down, ms: about four cron ticks. */
const RUN_MS = 4_200;
/** How long the demo waits for the other instance to be elected, ms. */
const ELECTION_LIMIT = 5_000;

/**
 * Demo part 6, background work in two instances of the app (`jobs`): the report job (a cron
 * every second under `@ScheduledLock`) and the outbox relay (`@LeaderOnly`). After about four
 * ticks the relay's leader shuts down (`app.close()`) and the other instance must take over.
 * Checks: every tick ran exactly once across the instances; one relay leader at a time (each
 * term on one instance, terms rising with time); the hand-over on shutdown took well under a
 * lease (printed in ms).
 */
export async function runJobs(config: AppConfig, check: Check): Promise<string> {
  const instances = ['job-1', 'job-2'];
  console.log(
    `6) 2 instances with the report job (@Cron every second, @ScheduledLock) and the outbox relay (@LeaderOnly), ${RUN_MS} ms, then the relay's leader shuts down`,
  );
  const apps: INestApplication[] = [];
  const closed = new Set<INestApplication>();
  let handOver = Infinity;
  try {
    for (const instance of instances) {
      const app = await NestFactory.create(AppModule.forRoot({ ...config, jobs: { instance } }), {
        logger: ['warn', 'error'],
      });
      await app.init();
      apps.push(app);
    }
    await sleep(RUN_MS);
    const leaderships = apps.map((app) => app.get(LockService).leader(OUTBOX_RELAY));
    const leading = leaderships.findIndex((leadership) => leadership.isLeader);
    check(leading >= 0, `no instance led ${OUTBOX_RELAY} after ${RUN_MS} ms`);
    if (leading >= 0) {
      const other = leaderships[1 - leading];
      const elected = firstValueFrom(other.changes$.pipe(filter((change) => change.leader)));
      const shutdownAt = performance.now();
      await apps[leading].close();
      closed.add(apps[leading]);
      const won = await Promise.race([elected.then(() => true), sleep(ELECTION_LIMIT, false)]);
      handOver = performance.now() - shutdownAt;
      check(won, `${instances[1 - leading]} was not elected within ${ELECTION_LIMIT} ms`);
      await sleep(200); // a few passes of the new leader
    }
  } finally {
    for (const app of apps) if (!closed.has(app)) await app.close();
  }
  const client = new Redis(config.redisUrl, { maxRetriesPerRequest: 1 });
  try {
    const runs = await client.lrange(`${config.keyPrefix}report:runs`, 0, -1);
    const passes = await client.lrange(`${config.keyPrefix}relay:passes`, 0, -1);
    const summary = `${reportRuns(runs, check)}; ${relayPasses(passes, check)}, hand-over on shutdown in ${ms(handOver)}`;
    console.log(`   ${summary}`);
    return summary;
  } finally {
    client.disconnect();
  }
}

/** Every tick (second) ran once: "report job: N ticks, each ran once (job-1 a, job-2 b)". */
function reportRuns(runs: string[], check: Check): string {
  const perTick = new Map<string, number>();
  const perInstance = new Map<string, number>();
  for (const run of runs) {
    const [tick, instance] = run.split(' ');
    perTick.set(tick, (perTick.get(tick) ?? 0) + 1);
    perInstance.set(instance, (perInstance.get(instance) ?? 0) + 1);
  }
  const twice = [...perTick].filter(([, count]) => count > 1);
  check(perTick.size >= 3, `the report job ran in ${perTick.size} ticks, expected at least 3`);
  check(twice.length === 0, `report ticks ran more than once: ${JSON.stringify(twice)}`);
  const by = [...perInstance].map(([instance, count]) => `${instance} ${count}`).join(', ');
  return `report job: ${perTick.size} ticks across 2 instances, each ran once (${by})`;
}

/** One leader at a time: each term on one instance, terms never going back in time. */
function relayPasses(passes: string[], check: Check): string {
  const parsed = passes
    .map((pass) => pass.split(' '))
    .map(([at, instance, term]) => ({ at: Number(at), instance, term: Number(term) }))
    .sort((a, b) => a.at - b.at);
  const leaderOf = new Map<number, string>();
  let latest = 0;
  for (const { instance, term } of parsed) {
    check(Number.isInteger(term) && term > 0, `a relay pass without a term: ${instance} ${term}`);
    check(
      (leaderOf.get(term) ?? instance) === instance,
      `term ${term} ran on ${leaderOf.get(term)} and on ${instance}`,
    );
    check(term >= latest, `term ${term} ran after term ${latest}`);
    leaderOf.set(term, instance);
    latest = Math.max(latest, term);
  }
  check(leaderOf.size >= 2, `the relay had ${leaderOf.size} term(s), expected a hand-over`);
  return `outbox relay: one leader at a time (${parsed.length} passes in ${leaderOf.size} terms)`;
}
