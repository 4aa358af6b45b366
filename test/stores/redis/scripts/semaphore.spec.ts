import type { Redis } from 'ioredis';
import { suiteRedis } from '../../../support/suite-redis';
import { commandCalls, listen, redisNow } from './probe-kit';
import { redisScript } from './script-kit';
import { sleep } from '../../../../tools/time';
import { ioredisClient } from '../../../../lib/stores/redis/client/ioredis';

const scripts = {
  acquire: redisScript('semaphore-acquire.lua'),
  release: redisScript('semaphore-release.lua'),
  renew: redisScript('semaphore-renew.lua'),
  available: redisScript('semaphore-available.lua'),
  forceUnlock: redisScript('semaphore-force-unlock.lua'),
};
/** Redisson's score for a permit without lease (nonExpirableTimeout). */
const NO_LEASE = 922337203685477;

describe('semaphore scripts against real Redis', () => {
  let raw: Redis;
  let test = 0;
  let name: string;
  const timeout = () => `{${name}}:timeout`;
  const channel = () => `redisson_sc:{${name}}`;
  const latch = (id: string) => `redisson_unlock_latch:{${name}}:${id.repeat(32)}`;
  const acquire = (limit: number, id: string, lease = 30_000) =>
    scripts.acquire.run(
      ioredisClient(raw),
      2,
      name,
      timeout(),
      lease,
      id,
      limit,
    ) as Promise<number>;
  const release = (limit: number, id: string, request: string) =>
    scripts.release.run(
      ioredisClient(raw),
      3,
      name,
      timeout(),
      latch(request),
      channel(),
      id,
      10_000,
      limit,
      'publish',
    );
  const renew = (lease: number, ...ids: string[]) =>
    scripts.renew.run(ioredisClient(raw), ids.length, ...ids.map(timeout), lease, ...ids);
  const available = (limit: number) =>
    scripts.available.run(ioredisClient(raw), 2, name, timeout(), limit) as Promise<number>;
  const forceUnlock = (limit: number) =>
    scripts.forceUnlock.run(
      ioredisClient(raw),
      2,
      name,
      timeout(),
      channel(),
      limit,
      'publish',
    ) as Promise<number>;
  const stored = async () => Number(await raw.get(name));

  const server = suiteRedis();
  beforeAll(async () => {
    raw = server.raw;
    for (const script of Object.values(scripts)) await raw.script('LOAD', script.source);
  });
  beforeEach(() => {
    test += 1;
    name = `sem:${test}`;
  });

  it('never grants more than the limit, and tells the others when the first permit expires', async () => {
    const replies = await Promise.all(
      ['a', 'b', 'c', 'd', 'e', 'f'].map((id) => acquire(3, `me:${id}`)),
    );
    expect(replies.filter((reply) => reply >= 0).sort((a, b) => a - b)).toEqual([0, 1, 2]);
    const busy = replies.filter((reply) => reply < 0);
    expect(busy).toHaveLength(3);
    for (const reply of busy) {
      expect(-2 - reply).toBeGreaterThan(29_000);
      expect(-2 - reply).toBeLessThanOrEqual(30_000);
    }
    expect(await raw.zcard(timeout())).toBe(3);
    expect(await stored()).toBe(0);
  });

  it('an acquire sent twice keeps one permit and takes the new lease', async () => {
    expect(await acquire(2, 'me:1', 5_000)).toBe(1);
    expect(await acquire(2, 'me:1', 30_000)).toBe(1);
    expect(await raw.zrange(timeout(), '0', '-1')).toEqual(['me:1']);
    expect(Number(await raw.zscore(timeout(), 'me:1'))).toBeGreaterThan(
      (await redisNow(raw)) + 29_000,
    );
  });

  it('gives the permit of a holder that never comes back to the next caller one lease later', async () => {
    expect(await acquire(1, 'crashed:1', 100)).toBe(0);
    let reply = await acquire(1, 'next:1');
    expect(-2 - reply).toBeLessThanOrEqual(100);
    while (reply < 0) {
      await sleep(-2 - reply); // the wait the script announced
      reply = await acquire(1, 'next:1');
    }
    expect(reply).toBe(0);
    expect(await raw.zrange(timeout(), '0', '-1')).toEqual(['next:1']);
    expect(await stored()).toBe(0);
    expect(await renew(30_000, 'crashed:1')).toEqual([0]);
    expect(await release(1, 'crashed:1', 'a')).toBeNull();
  });

  it('renewal keeps a permit; an expired or missing one gets 0 and is not revived', async () => {
    await acquire(3, 'me:2', 200);
    const now = await redisNow(raw);
    await raw.zadd(timeout(), now - 1, 'expired:2'); // past its lease, not yet removed
    expect(await renew(30_000, 'me:2', 'expired:2', 'missing:2')).toEqual([1, 0, 0]);
    expect(Number(await raw.zscore(timeout(), 'me:2'))).toBeGreaterThanOrEqual(now + 30_000);
    expect(Number(await raw.zscore(timeout(), 'expired:2'))).toBe(now - 1);
    const busy = await acquire(1, 'other:2'); // 'me:2' holds the only permit of limit 1
    expect(-2 - busy).toBeGreaterThan(29_000);
  });

  it('a release frees the permit and publishes the available count on the channel', async () => {
    const listener = await listen(raw, channel());
    try {
      await acquire(3, 'me:3');
      await acquire(3, 'other:3');
      expect(await release(3, 'me:3', 'b')).toBe(1);
      await listener.received(1);
      expect(listener.messages).toEqual([[channel(), '2']]);
      expect(await raw.zrange(timeout(), '0', '-1')).toEqual(['other:3']);
      expect(await stored()).toBe(2);
    } finally {
      listener.close();
    }
  });

  it('a release sent twice returns its first answer and publishes once; another request gets nil', async () => {
    const listener = await listen(raw, channel());
    try {
      await acquire(2, 'me:4');
      expect(await release(2, 'me:4', 'c')).toBe(1);
      expect(await release(2, 'me:4', 'c')).toBe(1);
      expect(await release(2, 'me:4', 'd')).toBeNull();
      await raw.publish(channel(), 'marker'); // delivered after anything published before
      await listener.received(2);
      expect(listener.messages.map(([, message]) => message)).toEqual(['2', 'marker']);
    } finally {
      listener.close();
    }
  });

  it('a release of an expired permit answers nil, removes it and publishes nothing', async () => {
    await raw.zadd(timeout(), (await redisNow(raw)) - 1, 'late:5');
    await raw.set(name, 1);
    const listener = await listen(raw, channel());
    try {
      expect(await release(2, 'late:5', 'e')).toBeNull();
      expect(await raw.exists(timeout(), latch('e'))).toBe(0);
      expect(await stored()).toBe(2);
      await raw.publish(channel(), 'marker');
      await listener.received(1);
      expect(listener.messages.map(([, message]) => message)).toEqual(['marker']);
    } finally {
      listener.close();
    }
  });

  it('available() counts free permits for the caller’s limit, after removing expired ones', async () => {
    expect(await available(3)).toBe(3);
    await acquire(3, 'me:6');
    await acquire(3, 'other:6');
    expect(await available(3)).toBe(1);
    await raw.config('RESETSTAT');
    expect(await available(3)).toBe(1);
    const calls = await commandCalls(raw);
    expect(calls.set ?? 0).toBe(0); // nothing changed: nothing written
    expect(calls.incrby ?? 0).toBe(0);
    await raw.zadd(timeout(), (await redisNow(raw)) - 1, 'other:6'); // its lease ran out
    expect(await available(3)).toBe(2);
    expect(await raw.zrange(timeout(), '0', '-1')).toEqual(['me:6']);
    expect(await stored()).toBe(2);
  });

  it('callers with different limits are each granted against their own limit', async () => {
    expect(await acquire(2, 'small:a', 10_000)).toBe(1);
    expect(await acquire(2, 'small:b', 20_000)).toBe(0);
    const full = await acquire(2, 'small:c');
    expect(-2 - full).toBeGreaterThan(9_000); // the first expiry frees the limit of 2
    expect(-2 - full).toBeLessThanOrEqual(10_000);
    expect(await acquire(4, 'large:a')).toBe(1); // 2 held < 4
    expect(await stored()).toBe(1); // N follows the last caller's limit
    const fuller = await acquire(2, 'small:c'); // 3 held: the 2nd expiry frees the limit of 2
    expect(-2 - fuller).toBeGreaterThan(19_000);
    expect(-2 - fuller).toBeLessThanOrEqual(20_000);
    expect(await stored()).toBe(-1);
    expect(await acquire(4, 'large:b')).toBe(0);
    expect(await acquire(4, 'large:c')).toBeLessThan(0);
    expect(await raw.zcard(timeout())).toBe(4); // never more than the larger limit
    expect(await available(2)).toBe(0);
    expect(await stored()).toBe(-2);
    expect(await available(4)).toBe(0);
    expect(await stored()).toBe(0);
  });

  it('a release by a caller whose limit is still exceeded publishes 1, waking a larger-limit waiter', async () => {
    for (const id of ['large:a', 'large:b', 'large:c']) await acquire(3, id);
    const listener = await listen(raw, channel());
    try {
      expect(await release(1, 'large:a', 'i')).toBe(1); // 2 held, limit 1: -1 available
      await listener.received(1);
      expect(listener.messages).toEqual([[channel(), '1']]); // never a negative count
      expect(await stored()).toBe(-1);
      expect(await acquire(3, 'large:d')).toBe(0);
    } finally {
      listener.close();
    }
  });

  it('force unlock revokes every permit, resets N to the limit and wakes waiters', async () => {
    await acquire(2, 'me:7');
    await raw.zadd(timeout(), NO_LEASE, Buffer.from('0123456789abcdef0123456789abcdef', 'hex'));
    const listener = await listen(raw, channel());
    try {
      expect(await forceUnlock(2)).toBe(2);
      await listener.received(1);
      expect(listener.messages).toEqual([[channel(), '2']]);
      expect(await raw.exists(timeout())).toBe(0);
      expect(await stored()).toBe(2);
      expect(await renew(30_000, 'me:7')).toEqual([0]);
      expect(await release(2, 'me:7', 'f')).toBeNull();
      expect(await forceUnlock(2)).toBe(0);
      await raw.publish(channel(), 'marker');
      await listener.received(2);
      expect(listener.messages[1]).toEqual([channel(), 'marker']);
    } finally {
      listener.close();
    }
  });

  it('shares permits with Redisson’s RPermitExpirableSemaphore (its steps as raw commands)', async () => {
    const held = async () => (await stored()) + (await raw.zcard(timeout()));
    const ids = ['00112233', 'ffeeddcc', '44556677'].map((hex) =>
      Buffer.from(hex.repeat(4), 'hex'),
    );
    expect(await acquire(3, 'node:8')).toBe(2);
    await raw.pexpire(name, 600_000); // a Redisson user may put a TTL on the semaphore
    // Redisson's acquire of 2 permits: N >= 2, so DECRBY N 2 and ZADD both ids with their expiry.
    expect(await stored()).toBeGreaterThanOrEqual(2);
    await raw.decrby(name, 2);
    await raw.zadd(timeout(), (await redisNow(raw)) + 20_000, ids[0], NO_LEASE, ids[1]);
    expect(await held()).toBe(3);
    const busy = await acquire(3, 'node:9');
    expect(-2 - busy).toBeGreaterThan(19_000);
    expect(-2 - busy).toBeLessThanOrEqual(20_000);
    expect(await release(3, 'node:8', 'g')).toBe(0);
    expect(await stored()).toBe(1); // what Redisson reads: one permit free
    expect(await acquire(3, 'node:9')).toBe(0);
    await raw.zrem(timeout(), ids[0]); // Redisson's release: ZREM, INCRBY N 1, PUBLISH N
    await raw.incrby(name, 1);
    expect(await held()).toBe(3);
    expect(await available(3)).toBe(1);
    expect(await raw.pttl(name)).toBeGreaterThan(590_000); // the TTL survived our writes
    expect(await release(3, 'node:9', 'h')).toBe(0);
    await raw.decrby(name, 2); // Redisson takes the 2 free permits without lease
    await raw.zadd(timeout(), NO_LEASE, ids[0], NO_LEASE, ids[2]);
    expect(await held()).toBe(3);
    expect(await acquire(3, 'node:10')).toBe(-1); // no permit will expire: wait for a message
  });
});
