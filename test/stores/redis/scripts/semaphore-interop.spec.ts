import type { Redis } from 'ioredis';
import { RedissonSemaphore } from '../../../support/redisson-semaphore';
import { redisScript } from './script-kit';
import { scriptSuite } from './script-suite';
import { sleep } from '../../../../tools/time';
import { ioredisClient } from '../../../../lib/stores/redis/client/ioredis';

const scripts = {
  acquire: redisScript('semaphore-acquire.lua'),
  release: redisScript('semaphore-release.lua'),
  available: redisScript('semaphore-available.lua'),
};

describe('permit-expirable semaphore: our scripts and Redisson’s share permits', () => {
  const suite = scriptSuite();
  let raw: Redis;
  let java: RedissonSemaphore;
  let name: string;
  const timeout = () => RedissonSemaphore.timeoutName(name);
  const channel = () => RedissonSemaphore.channelName(name);
  const acquire = async (limit: number, id: string, lease = 30_000) =>
    Number(await scripts.acquire.run(ioredisClient(raw), 2, name, timeout(), lease, id, limit));
  const release = async (limit: number, id: string) => {
    const latch = `redisson_unlock_latch:{${name}}:${'a'.repeat(32)}`;
    const reply = await scripts.release.run(
      ioredisClient(raw),
      3,
      name,
      timeout(),
      latch,
      channel(),
      id,
      10_000,
      limit,
      'publish',
    );
    await raw.del(latch);
    return reply === null ? null : Number(reply);
  };
  const available = async (limit: number) =>
    Number(await scripts.available.run(ioredisClient(raw), 2, name, timeout(), limit));

  beforeAll(() => {
    raw = suite.raw;
    java = new RedissonSemaphore(raw);
  });
  beforeEach(async () => {
    name = suite.fresh('semx');
    await suite.listen(channel());
  });

  it('counts a Redisson permit against our limit, and Redisson counts ours', async () => {
    expect(await java.trySetPermits(name, 2)).toBe(true);
    expect(await suite.listener.next(channel())).toBe('2');
    const permit = await java.tryAcquire(name, 30_000);
    expect(permit.id).toMatch(/^[0-9a-f]{32}$/);
    expect(await acquire(2, 'us:1')).toBe(0); // granted, none left
    expect(await raw.get(name)).toBe('0');
    expect(await acquire(2, 'us:2')).toBeLessThan(-2); // waits for the first expiry
    const refused = await java.tryAcquire(name, 30_000);
    expect(refused.id).toBeNull();
    expect(refused.nearest).toBeGreaterThan(Date.now() + 29_000);

    expect(await java.tryRelease(name, permit.id!)).toBe(true);
    expect(await suite.listener.next(channel())).toBe('1'); // what our waiters wake on
    expect(await acquire(2, 'us:2')).toBe(0);
    expect(await release(2, 'us:1')).toBeGreaterThanOrEqual(1);
    expect(await suite.listener.next(channel())).toBe('1'); // what Redisson's waiters wake on
    expect((await java.tryAcquire(name, 30_000)).id).not.toBeNull();
    expect(await java.availablePermits(name)).toBe(0);
    expect(await raw.zcard(timeout())).toBe(2);
  });

  it('takes back an expired permit of either side', async () => {
    expect(await java.trySetPermits(name, 1)).toBe(true);
    expect((await java.tryAcquire(name, 100)).id).not.toBeNull(); // its process dies
    expect(await acquire(1, 'us:1')).toBeLessThan(-2);
    await sleep(150);
    expect(await acquire(1, 'us:1', 100)).toBe(0); // and we die too
    expect(await available(1)).toBe(0);
    await sleep(150);
    expect(await java.availablePermits(name)).toBe(1); // Redisson's INCRBY on our expired permit
    expect(await available(1)).toBe(1);
    expect((await java.tryAcquire(name, 30_000)).id).not.toBeNull();
    expect(await available(1)).toBe(0);
  });
});
