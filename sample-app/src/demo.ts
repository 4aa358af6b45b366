import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { Redis } from 'ioredis';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { relative } from 'node:path';
import { AppModule } from './app.module';
import type { Check } from './demo-http';
import { readAndDeposit } from './demo-accounts';
import { limitExports } from './demo-exports';
import { openInspectorPage } from './demo-inspector';
import { runJobs } from './demo-jobs';
import { ORDERS, payOrders } from './demo-orders';
import { resolveRedis } from './demo-redis';
import { transferBothWays } from './demo-transfers';
import { startTracing, type SpanCounts } from './tracing';

/**
 * `npm run demo`: starts the orders app on a free port and fires concurrent requests at each
 * kind of lock: payments (plain lock: every order charged exactly once), balance reads and
 * deposits (read-write lock), transfers both ways (multi-lock), exports (semaphore); then two
 * instances run a cron job (`@ScheduledLock`) and a leader loop (`@LeaderOnly`). The first app
 * records lock spans (module option `tracing`) into an in-memory exporter, summed up in one line
 * (skipped when the OpenTelemetry packages are not installed). Prints what it saw; exits 0 when
 * every check passed, 1 otherwise.
 * Redis: REDIS_URL, else 127.0.0.1:6379, else a redis-server it starts (`--own-redis` skips
 * 6379). Every key it writes carries a per-run prefix and is deleted at the end.
 */
async function main(): Promise<number> {
  const redis = await resolveRedis({ ownServer: process.argv.includes('--own-redis') });
  const keyPrefix = `nestjs-redis-lock-demo:${randomBytes(6).toString('hex')}:`;
  const failures: string[] = [];
  const summaries: string[] = [];
  const check: Check = (ok, failure) => {
    if (!ok) failures.push(failure);
  };
  console.log(
    `nestjs-redis-lock demo: Nest ${packageVersion('@nestjs/core')}, Node ${process.version}, ` +
      `library ${relative(process.cwd(), require.resolve('nestjs-redis-lock'))}`,
  );
  console.log(`Redis ${redis.url} (${redis.origin}), key prefix ${keyPrefix}`);
  const tracing = startTracing({ memory: true });
  try {
    const app = await NestFactory.create(
      AppModule.forRoot({ redisUrl: redis.url, keyPrefix, tracing: tracing !== undefined }),
      { logger: ['warn', 'error'] },
    );
    try {
      await app.listen(0, '127.0.0.1');
      const { port } = (app.getHttpServer() as { address(): AddressInfo }).address();
      const base = `http://127.0.0.1:${port}`;
      console.log(`Orders app on ${base}\n`);

      summaries.push(await payOrders(base, check));
      summaries.push(await readAndDeposit(base, check));
      summaries.push(await transferBothWays(base, check));
      summaries.push(await limitExports(base, check, ORDERS));
      summaries.push(await openInspectorPage(base, check));
    } finally {
      await app.close();
    }
    if (tracing) console.log(spansLine(tracing.counts(), check));
    else console.log('Tracing: skipped (@opentelemetry/sdk-trace-base is not installed)\n');
    summaries.push(await runJobs({ redisUrl: redis.url, keyPrefix }, check));
  } finally {
    await tracing?.stop();
    const removed = await removeKeys(redis.url, keyPrefix);
    await redis.stop();
    console.log(`Cleanup: app closed, ${removed} demo keys deleted`);
  }

  if (failures.length > 0) {
    console.log(`\nFAILED: ${failures.length} check(s) failed`);
    for (const failure of failures) console.log(`  - ${failure}`);
    return 1;
  }
  console.log(`\nOK: ${summaries.join('; ')}`);
  return 0;
}

/**
 * The one-line summary of the spans of steps 1-5; checks that every wait ended with the lock
 * (the module's waitTime is long enough for each burst) and every hold with its release.
 */
function spansLine(counts: SpanCounts, check: Check): string {
  const list = (byOutcome: Record<string, number>) =>
    Object.entries(byOutcome)
      .map(([outcome, count]) => `${outcome} ${count}`)
      .join(', ') || 'none';
  const acquired = counts.acquire.acquired ?? 0;
  const total = (byOutcome: Record<string, number>) =>
    Object.values(byOutcome).reduce((sum, count) => sum + count, 0);
  check(
    acquired > 0 && acquired === total(counts.acquire),
    `spans: every lock.acquire should end acquired, got ${list(counts.acquire)}`,
  );
  check(
    counts.hold.released === acquired && total(counts.hold) === acquired,
    `spans: every lock.hold should end released (${acquired}), got ${list(counts.hold)}`,
  );
  return (
    `Tracing (in-memory exporter): lock.acquire ${list(counts.acquire)} ` +
    `(${counts.retried} waited for more than one attempt); lock.hold ${list(counts.hold)}\n`
  );
}

function packageVersion(name: string): string {
  const manifest = JSON.parse(readFileSync(require.resolve(`${name}/package.json`), 'utf8')) as {
    version: string;
  };
  return manifest.version;
}

/** Deletes every key of this run: the app's data, lock keys and Redisson's auxiliary keys. */
async function removeKeys(url: string, keyPrefix: string): Promise<number> {
  const client = new Redis(url, { maxRetriesPerRequest: 1 });
  client.on('error', () => undefined);
  let removed = 0;
  try {
    let cursor = '0';
    do {
      const [next, keys] = await client.scan(cursor, 'MATCH', `*${keyPrefix}*`, 'COUNT', 1000);
      cursor = next;
      if (keys.length > 0) removed += await client.del(...keys);
    } while (cursor !== '0');
  } finally {
    client.disconnect();
  }
  return removed;
}

main().then(
  (code) => {
    process.exitCode = code;
    // Everything is closed now; if something still holds the event loop, say so and fail.
    setTimeout(() => {
      console.error('demo: the process is still running 10 s after shutdown (open handles)');
      process.exit(1);
    }, 10_000).unref();
  },
  (error: unknown) => {
    console.error(`demo failed: ${error instanceof Error ? error.message : String(error)}`);
    process.exit(1);
  },
);
