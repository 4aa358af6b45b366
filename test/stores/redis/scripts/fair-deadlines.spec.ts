import type { Redis } from 'ioredis';
import { fairLock, waitOf } from './script-kit';
import { scriptSuite } from './script-suite';

/**
 * The fair scripts' deadlines follow the actual turns: no drift under churn, a dead waiter costs
 * the queue at most its place timeout after its turn came, nothing is left without a TTL, and a
 * release with nobody queued tells the plain lock's waiters.
 */
describe('fair lock scripts: deadlines, TTLs and the plain channel', () => {
  const suite = scriptSuite();
  let raw: Redis;
  const fresh = async (...owners: string[]) => {
    const lock = fairLock(raw, suite.fresh('fairdl'));
    const plain = `redisson_lock__channel:{${lock.name}}`;
    await suite.listen(plain, ...owners.map(lock.channelOf));
    return { lock, plain };
  };
  const redisNow = async () => {
    const [seconds, micros] = await raw.time();
    return Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
  };
  const deadlines = async (key: string) =>
    (await raw.zrange(key, '0', '-1', 'WITHSCORES')).filter((_, i) => i % 2 === 1).map(Number);
  beforeAll(() => (raw = suite.raw));

  it('deadlines do not drift under churn, and a dead waiter then costs at most its place timeout', async () => {
    const owners = ['a:1', 'b:1', 'c:1', 'd:1'];
    const { lock } = await fresh(...owners);
    const place = 1_000;
    expect(await lock.acquire('a:1', { place })).toBe(0);
    for (const owner of owners.slice(1))
      expect(await lock.acquire(owner, { place })).toBeLessThan(0);
    // 40 hand-offs: the holder releases, the head takes the lock, the old holder queues again.
    let holder = 'a:1';
    for (let i = 0; i < 40; i++) {
      expect(await lock.release(holder, `r${i}`, { place })).toBe(1);
      const head = (await raw.lindex(lock.queue, 0))!;
      expect(await lock.acquire(head, { place })).toBe(0);
      expect(await lock.acquire(holder, { place })).toBeLessThan(0);
      holder = head;
    }
    // Three waiters behind a holder with a 30 s lease: none is due later than the lease end plus
    // three place timeouts (before: each hand-off added a place timeout to the newest deadline).
    const latest = Math.max(...(await deadlines(lock.timeouts)));
    expect(latest).toBeLessThanOrEqual((await redisNow()) + 30_000 + 3 * place);
    // The head dies; the holder releases: the waiter behind it waits at most the place timeout.
    const [dead, next] = await raw.lrange(lock.queue, 0, 1);
    expect(await lock.release(holder, 'last', { place })).toBe(1);
    expect(waitOf(await lock.acquire(next, { place }))).toBeLessThanOrEqual(place);
    expect(await raw.lindex(lock.queue, 0)).toBe(dead);
  });

  it('a head that never takes its turn costs the queue at most its place timeout, not the lease', async () => {
    const { lock } = await fresh('b:1');
    expect(await lock.acquire('h:1', { lease: 10_000 })).toBe(0);
    expect(await lock.acquire('dead:1', { place: 2_000 })).toBeLessThan(0); // it dies now
    expect(await lock.acquire('b:1', { place: 2_000 })).toBeLessThan(0);
    expect(await lock.release('h:1', 'h', { place: 2_000 })).toBe(0); // nobody heard the dead one
    const released = await redisNow();
    // Before: its deadline was the lease end plus the place timeout, ~12 s away.
    expect(Number(await raw.zscore(lock.timeouts, 'dead:1'))).toBeLessThanOrEqual(released + 2_000);
    expect(waitOf(await lock.acquire('b:1', { place: 2_000 }))).toBeLessThanOrEqual(2_000);
  });

  it('a waiter keeps its place across a renewal of the holder, and it moves every deadline', async () => {
    const { lock } = await fresh();
    expect(await lock.acquire('h:1', { lease: 1_000 })).toBe(0);
    for (const owner of ['a:1', 'b:1'])
      expect(await lock.acquire(owner, { place: 500 })).toBeLessThan(0);
    const [a, b] = await deadlines(lock.timeouts);
    expect(b - a).toBe(500);
    const before = await redisNow();
    await raw.pexpire(lock.name, 60_000); // the holder renewed
    expect(waitOf(await lock.acquire('b:1', { place: 500 }))).toBeGreaterThan(59_000);
    const [a2, b2] = await deadlines(lock.timeouts);
    expect(a2).toBeGreaterThanOrEqual(before + 60_000 + 500 - 1); // (PTTL is truncated)
    expect(b2 - a2).toBe(500);
    expect(await raw.lrange(lock.queue, 0, -1)).toEqual(['a:1', 'b:1']);
  });

  it('the queue, the deadline set and the turn always have a TTL covering the last deadline', async () => {
    const { lock } = await fresh();
    expect(await lock.acquire('h:1')).toBe(0);
    expect(await lock.acquire('a:1')).toBeLessThan(0); // a waiter that crashes now
    const last = Math.max(...(await deadlines(lock.timeouts)));
    const now = await redisNow();
    for (const key of [lock.queue, lock.timeouts, lock.turn]) {
      const ttl = await raw.pttl(key);
      expect(ttl).toBeGreaterThan(last - now);
      // + 1: the script's TIME and the expiry's clock are each cut to whole ms.
      expect(ttl).toBeLessThanOrEqual(last - now + 300_000 + 1);
    }
    // Redisson's RPUSH and ZADD to the existing keys keep their TTL.
    await raw.rpush(lock.queue, 'java:1');
    await raw.zadd(lock.timeouts, last + 1, 'java:1');
    expect(await raw.pttl(lock.queue)).toBeGreaterThan(0);
    expect(await raw.pttl(lock.timeouts)).toBeGreaterThan(0);
    // A release and a leave keep it; the last one out deletes the keys.
    expect(await lock.leave('a:1')).toBe(1);
    expect(await raw.pttl(lock.timeouts)).toBeGreaterThan(0);
    await raw.zrem(lock.timeouts, 'java:1');
    expect(await lock.release('h:1', 'h')).toBe(1); // tells the plain channel: java:1 dropped
    expect(await raw.exists(lock.queue, lock.timeouts, lock.turn)).toBe(0);
  });

  it('with nobody queued, a release or the last waiter leaving a free lock tells the plain channel', async () => {
    const { lock, plain } = await fresh('a:1');
    expect(await lock.acquire('h:1')).toBe(0);
    expect(await lock.acquire('a:1')).toBeLessThan(0);
    expect(await lock.release('h:1', 'h')).toBe(1); // a is queued: only a is told
    expect(await suite.listener.next(lock.channelOf('a:1'))).toBe('0');
    expect(await lock.leave('a:1')).toBe(1); // a gives up: the plain lock's waiters may go
    expect(await suite.listener.next(plain)).toBe('0');
    expect(await lock.acquire('b:1')).toBe(0);
    expect(await lock.release('b:1', 'b')).toBe(1);
    expect(await suite.listener.next(plain)).toBe('0');
    expect(suite.listener.on(plain)).toEqual(['0', '0']);
  });

  it('a turn left from an earlier queue does not move the deadlines of a new one', async () => {
    const { lock } = await fresh('a:1');
    expect(await lock.acquire('h:1', { lease: 60_000 })).toBe(0);
    expect(await lock.acquire('x:1')).toBeLessThan(0); // its turn: the 60 s lease end
    expect(await lock.forceUnlock()).toBe(1); // clears the queue; the turn keeps its TTL
    expect(await lock.acquire('h:2', { lease: 10_000 })).toBe(0);
    expect(await lock.acquire('a:1', { place: 1_000 })).toBeLessThan(0);
    expect(await lock.release('h:2', 'h2')).toBe(1);
    expect(await suite.listener.next(lock.channelOf('a:1'))).toBe('0');
    expect(await lock.acquire('a:1', { place: 1_000 })).toBe(0);
  });

  it('a grant undone for want of replicas puts the waiter back at the head of the queue', async () => {
    const { lock } = await fresh('a:1', 'b:1');
    expect(await lock.acquire('h:1')).toBe(0);
    for (const owner of ['a:1', 'b:1']) expect(await lock.acquire(owner)).toBeLessThan(0);
    expect(await lock.release('h:1', 'h')).toBe(1);
    expect(await lock.acquire('a:1')).toBe(0);
    expect(await lock.release('a:1', 'undo', { requeue: true })).toBe(1);
    expect(await raw.lrange(lock.queue, 0, -1)).toEqual(['a:1', 'b:1']);
    expect(await lock.acquire('b:1')).toBeLessThan(0);
    expect(await lock.acquire('a:1')).toBe(0);
  });
});
