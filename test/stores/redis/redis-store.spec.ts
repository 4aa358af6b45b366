import { Redis } from 'ioredis';
import { LockLostError, type LockService } from '../../../lib';
import { lockApp, lockAppEach } from '../../support/lock-app';
import type { TestRedis } from '../../support/redis-server';
import { suiteRedis } from '../../support/suite-redis';
import { sleep, until } from '../../../tools/time';

// What only the Redis store has: Redisson's layout and interop, its connections and clients.
// The behaviour both stores share is tested in lock-service.spec.ts.
describe('LockService against real Redis: layout, interop, clients', () => {
  let redis: TestRedis;
  let raw: Redis;
  let locks: LockService;
  let prefix: string;

  const server = suiteRedis();
  beforeAll(() => ({ redis, raw } = server));
  lockAppEach(
    () => redis,
    { leaseTime: 600, waitTime: 5_000 },
    (made) => ({ locks, prefix } = made),
  );

  it('uses Redisson’s layout: hash field <uuid>:<n> = 1, a lease, and a release message', async () => {
    const subscriber = redis.client();
    const messages: [string, string][] = [];
    await subscriber.subscribe(`redisson_lock__channel:{${prefix}layout}`);
    subscriber.on('message', (channel: string, message: string) =>
      messages.push([channel, message]),
    );
    const lock = await locks.acquire('layout');
    const hash = await raw.hgetall(`${prefix}layout`);
    expect(Object.entries(hash)).toEqual([
      [
        expect.stringMatching(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}:\d+$/),
        '1',
      ],
    ]);
    const ttl = await raw.pttl(`${prefix}layout`);
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(600);
    // Fencing is opt-in (Redisson's RLock has no token): no counter key is written.
    expect(lock.fencingToken).toBeUndefined();
    expect(await raw.exists(`redisson_lock_token:{${prefix}layout}`)).toBe(0);
    await lock.release();
    await until(() => messages.length > 0, 1_000);
    expect(messages).toEqual([[`redisson_lock__channel:{${prefix}layout}`, '0']]);
    // Released, only the short-lived unlock latch is left.
    const left = await raw.keys(`*${prefix}layout*`);
    expect(left).toEqual([
      expect.stringMatching(/^redisson_unlock_latch:\{.*layout\}:[0-9a-f]{32}$/),
    ]);
    expect(await raw.pttl(left[0])).toBeGreaterThan(0);
    subscriber.disconnect();
  });

  it('waits for a lock held by a Redisson-style foreign owner, and is woken by its release', async () => {
    const name = `${prefix}foreign`;
    await raw.hset(name, '9c345276-aa6e-44c1-b478-bf4b14ba1498:1', 1);
    await raw.pexpire(name, 30_000);
    expect(await locks.tryAcquire('foreign')).toBeNull();
    const waiting = locks.acquire('foreign', { waitTime: 5_000 });
    await sleep(100);
    // What Redisson's unlock does: delete the hash and publish 0 on the channel.
    await raw.del(name);
    await raw.publish(`redisson_lock__channel:{${name}}`, '0');
    const lock = await waiting;
    await lock.release();
  });

  it('close() while an acquire is in flight: the call is refused, not handed a lock nobody renews', async () => {
    const other = await lockApp(redis, { keyPrefix: prefix });
    await (await other.locks.acquire('closing:warm')).release(); // connected, scripts loaded
    // Redis busy for 50 ms: the acquire's answer comes after close() has begun.
    const busy = raw.eval(
      `local t0 = redis.call('time')
       repeat local t = redis.call('time')
       until (t[1] - t0[1]) * 1000000 + (t[2] - t0[2]) > 50000`,
      0,
    );
    await sleep(5);
    const acquiring = other.locks.acquire('closing');
    await other.app.close();
    await busy;
    await expect(acquiring).rejects.toThrow(/shutting down/);
    await until(async () => !(await locks.isLocked('closing')), 1_000); // freed, or its lease ran out
  });

  it('works with a client set to stringNumbers: tokens are numbers, renewals are understood', async () => {
    const client = new Redis(redis.url, { stringNumbers: true });
    // A 1 s lease: a 300 ms one can be lost to an event-loop stall of a loaded CI run.
    const other = await lockApp(redis, { redis: undefined, client, leaseTime: 1_000 });
    try {
      const held = await other.locks.acquire('strings', { fencing: true });
      expect(typeof held.fencingToken).toBe('number');
      expect(await other.locks.isLocked('strings')).toBe(true);
      expect(await other.locks.remainingTtl('strings')).toBeGreaterThan(0);
      await sleep(2_100); // two leases: renewed, not reported lost
      expect(held.signal.reason).toBeUndefined();
      await held.release();
      const forced = await other.locks.acquire('strings:forced');
      expect(await other.locks.forceUnlock('strings:forced')).toBe(true);
      await expect(forced.release()).rejects.toBeInstanceOf(LockLostError);
    } finally {
      await other.app.close();
      client.disconnect();
    }
  });

  it('keeps the fencing counter without a TTL, as Redisson, so no client’s tokens go backwards', async () => {
    const counter = `redisson_lock_token:{${prefix}fence}`;
    // Redisson's RFencedLock made the counter (INCR: 1), and an earlier release of this library
    // left a TTL on it, which Redisson's INCR keeps: Java-only use would see it expire.
    expect(await raw.incr(counter)).toBe(1);
    await raw.pexpire(counter, 60_000);
    const tokens: number[] = [];
    for (let i = 0; i < 2; i++) {
      await locks.run('fence', (lock) => void tokens.push(lock.fencingToken!), { fencing: true });
      expect(await raw.pttl(counter)).toBe(-1); // an acquire that issues a token drops the TTL
    }
    expect(tokens).toEqual([2, 3]);
    // Java goes on counting from there (its acquire is an INCR), and Node after Java.
    expect(await raw.incr(counter)).toBe(4);
    const held = await locks.acquire('fence', { fencing: true });
    expect(held.fencingToken).toBe(5);
    // forceUnlock frees the lock, never the counter: a later token must still be larger.
    expect(await locks.forceUnlock('fence')).toBe(true);
    await expect(held.release()).rejects.toBeInstanceOf(LockLostError);
    expect(await raw.get(counter)).toBe('5');
    expect(await raw.pttl(counter)).toBe(-1);
  });
});
