import type { Redis } from 'ioredis';
import { LockScripts } from '../../../../lib/stores/redis/lock-scripts';
import { forceUnlock } from './script-kit';
import { suiteRedis } from '../../../support/suite-redis';
import { ioredisClient } from '../../../../lib/stores/redis/client/ioredis';

describe('Lua scripts against real Redis', () => {
  let raw: Redis;
  const name = `scripts:${Date.now()}`;
  const token = `redisson_lock_token:{${name}}`;
  const channel = `redisson_lock__channel:{${name}}`;
  const latch = (id: string) => `redisson_unlock_latch:{${name}}:${id.repeat(32)}`;
  const acquire = (field: string, fencing = '1') =>
    (fencing === '1'
      ? LockScripts.acquireFenced.run(ioredisClient(raw), 2, name, token, 30_000, field)
      : LockScripts.acquire.run(ioredisClient(raw), 1, name, 30_000, field)) as Promise<number>;
  const release = (field: string, id: string) =>
    LockScripts.release.run(
      ioredisClient(raw),
      2,
      name,
      latch(id),
      field,
      10_000,
      'publish',
      channel,
    );

  const server = suiteRedis();
  beforeAll(() => (raw = server.raw));

  it('an acquire sent twice keeps the count at 1, so one release frees the lock', async () => {
    const first = await acquire('me:1');
    expect(first).toBeGreaterThan(0);
    expect(await acquire('me:1')).toBe(first + 1);
    expect(await raw.hgetall(name)).toEqual({ 'me:1': '1' });
    const busy = await acquire('other:1');
    expect(busy).toBeLessThan(0);
    const pttl = -2 - busy;
    expect(pttl).toBeGreaterThan(29_000);
    expect(pttl).toBeLessThanOrEqual(30_000);
    expect(await release('me:1', 'a')).toBe(0);
    expect(await raw.exists(name)).toBe(0);
  });

  it('answers a busy lock without a lease with -1 (PTTL -1), and 0 when no token is asked for', async () => {
    await raw.hset(name, 'java:0', 1);
    expect(await acquire('me:0')).toBe(-1);
    await raw.del(name);
    expect(await acquire('me:0', '0')).toBe(0);
    expect(await release('me:0', '9')).toBe(0);
  });

  it('starts a missing token counter at Redis time in µs, so tokens outgrow those before a wipe', async () => {
    await raw.set(token, 41);
    expect(await acquire('me:5')).toBe(42); // an existing counter just counts on (as RFencedLock)
    expect(await release('me:5', '5')).toBe(0);
    await raw.del(token); // what a restart without persistence does
    const [seconds, micros] = await raw.time();
    const seeded = await acquire('me:6');
    const clock = Number(seconds) * 1e6 + Number(micros);
    expect(seeded).toBeGreaterThanOrEqual(clock);
    expect(seeded).toBeLessThan(clock + 5e6);
    expect(await raw.get(token)).toBe(String(seeded)); // a plain integer INCR can go on from
    expect(await raw.pttl(token)).toBe(-1); // no TTL, as Redisson's (its INCR keeps a TTL)
    expect(await release('me:6', '6')).toBe(0);
    expect(await acquire('me:7')).toBe(seeded + 1);
    expect(await release('me:7', '7')).toBe(0);
  });

  it('a release sent twice returns its first answer; another request for a gone field gets nil', async () => {
    const listener = raw.duplicate();
    await listener.subscribe(channel);
    try {
      await acquire('me:2');
      expect(await release('me:2', 'b')).toBe(1); // one client was listening on the channel
      await listener.unsubscribe(channel);
      expect(await release('me:2', 'b')).toBe(1); // the resend: the first answer, from the latch
      expect(await release('me:2', 'c')).toBeNull();
    } finally {
      listener.disconnect();
    }
  });

  it('never touches a lock held by another owner', async () => {
    await acquire('owner:3');
    expect(await release('intruder:3', 'd')).toBeNull();
    expect(await raw.hgetall(name)).toEqual({ 'owner:3': '1' });
    expect(await release('owner:3', 'e')).toBe(0);
  });

  it('renews a batch and reports which locks are gone', async () => {
    await acquire('me:4');
    const renewed = await LockScripts.renew.run(
      ioredisClient(raw),
      2,
      name,
      `${name}:missing`,
      60_000,
      'll',
      'me:4',
      'me:4',
    );
    expect(renewed).toEqual([1, 0]);
    expect(await raw.pttl(name)).toBeGreaterThan(59_000);
    expect(await forceUnlock(raw, name)).toBe(1);
    expect(await forceUnlock(raw, name)).toBe(0);
  });
});
