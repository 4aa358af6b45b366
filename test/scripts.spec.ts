import type { Redis } from 'ioredis';
import { LockScripts } from '../lib/engine/lock-scripts';
import { suiteRedis } from './support/suite-redis';

describe('Lua scripts against real Redis', () => {
  let raw: Redis;
  const name = `scripts:${Date.now()}`;
  const token = `redisson_lock_token:{${name}}`;
  const channel = `redisson_lock__channel:{${name}}`;
  const latch = (id: string) => `redisson_unlock_latch:{${name}}:${id.repeat(32)}`;
  const acquire = (field: string) =>
    LockScripts.acquire.run(raw, [name, token], [30_000, field, '1']);
  const release = (field: string, id: string) =>
    LockScripts.release.run(raw, [name, latch(id)], [channel, 30_000, field, 10_000]);

  const server = suiteRedis();
  beforeAll(() => (raw = server.raw));

  it('an acquire sent twice keeps the count at 1, so one release frees the lock', async () => {
    expect(await acquire('me:1')).toEqual([1, 1]);
    expect(await acquire('me:1')).toEqual([1, 2]);
    expect(await raw.hgetall(name)).toEqual({ 'me:1': '1' });
    const [busy, pttl] = (await acquire('other:1')) as [number, number];
    expect(busy).toBe(0);
    expect(pttl).toBeGreaterThan(29_000);
    expect(await release('me:1', 'a')).toBe(1);
    expect(await raw.exists(name)).toBe(0);
  });

  it('a release sent twice returns its first answer; another request for a gone field gets nil', async () => {
    await acquire('me:2');
    expect(await release('me:2', 'b')).toBe(1);
    expect(await release('me:2', 'b')).toBe(1);
    expect(await release('me:2', 'c')).toBeNull();
  });

  it('never touches a lock held by another owner', async () => {
    await acquire('owner:3');
    expect(await release('intruder:3', 'd')).toBeNull();
    expect(await raw.hgetall(name)).toEqual({ 'owner:3': '1' });
    expect(await release('owner:3', 'e')).toBe(1);
  });

  it('decrements a Redisson hold count above 1 and keeps the lease', async () => {
    await raw.hset(name, 'java:1', 2);
    expect(await release('java:1', 'f')).toBe(0);
    expect(await raw.hget(name, 'java:1')).toBe('1');
    expect(await raw.pttl(name)).toBeGreaterThan(29_000);
    expect(await release('java:1', '0')).toBe(1);
  });

  it('renews a batch and reports which locks are gone', async () => {
    await acquire('me:4');
    const renewed = await LockScripts.renew.run(
      raw,
      [name, `${name}:missing`],
      [60_000, 'me:4', 'me:4'],
    );
    expect(renewed).toEqual([1, 0]);
    expect(await raw.pttl(name)).toBeGreaterThan(59_000);
    expect(await LockScripts.forceUnlock.run(raw, [name], [channel])).toBe(1);
    expect(await LockScripts.forceUnlock.run(raw, [name], [channel])).toBe(0);
  });
});
