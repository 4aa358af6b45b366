import type { Redis } from 'ioredis';
import { startRedis, type TestRedis } from './redis-server';

/**
 * Jest hooks for a suite: starts a Redis server (see startRedis) and a raw client on it before
 * the suite's tests, and stops both after them. Read `redis`/`raw` inside hooks and tests.
 */
export function suiteRedis(): { readonly redis: TestRedis; readonly raw: Redis } {
  let redis: TestRedis | undefined;
  let raw: Redis | undefined;
  beforeAll(async () => {
    redis = await startRedis();
    raw = redis.client();
  });
  afterAll(async () => {
    raw?.disconnect();
    await redis?.stop();
  });
  return {
    get redis() {
      return redis!;
    },
    get raw() {
      return raw!;
    },
  };
}
