import type { Redis } from 'ioredis';
import { startRedis, type TestRedis } from './redis-server';

/** What suiteRedis() starts; read its fields inside hooks and tests. */
export interface SuiteRedis {
  readonly redis: TestRedis;
  readonly raw: Redis;
  /** Has `closable` closed after the suite's tests, before the server stops (the last first). */
  closing<T extends { close(): Promise<unknown> }>(closable: T): T;
}

/**
 * Jest hooks for a suite: starts a Redis server (see startRedis; `control` for one the suite
 * kills, pauses or restarts, whose raw client's errors are then expected) and a raw client on it
 * before the suite's tests, and stops both after them and after what was passed to closing().
 */
export function suiteRedis(options: { control?: boolean } = {}): SuiteRedis {
  let redis: TestRedis | undefined;
  let raw: Redis | undefined;
  const closables: { close(): Promise<unknown> }[] = [];
  beforeAll(async () => {
    redis = await startRedis(options);
    raw = redis.client();
    if (options.control) raw.on('error', () => undefined);
  });
  afterAll(async () => {
    // Each closes and the server stops although one fails; the first failure is then thrown.
    const failures: unknown[] = [];
    for (const closable of closables.splice(0).reverse()) {
      await closable.close().catch((error: unknown) => failures.push(error));
    }
    raw?.disconnect();
    await redis?.stop();
    if (failures.length > 0) throw failures[0];
  });
  return {
    get redis() {
      return redis!;
    },
    get raw() {
      return raw!;
    },
    closing(closable) {
      closables.push(closable);
      return closable;
    },
  };
}
