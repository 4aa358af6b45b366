import type { Redis } from 'ioredis';
import { fairLock, waitOf } from './script-kit';
import { scriptSuite } from './script-suite';
import { sleep } from '../../../../tools/time';

describe('fair lock scripts against real Redis', () => {
  const suite = scriptSuite();
  let raw: Redis;
  const owners = ['h:1', 'a:1', 'b:1', 'c:1', 'd:1'];
  /** A fresh lock per test, with a listener on each owner's channel and the plain channel. */
  const fresh = async () => {
    const lock = fairLock(raw, suite.fresh('fair'));
    const plain = `redisson_lock__channel:{${lock.name}}`;
    await suite.listen(plain, ...owners.map(lock.channelOf));
    return lock;
  };
  const redisNow = async () => {
    const [seconds, micros] = await raw.time();
    return Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
  };
  beforeAll(() => (raw = suite.raw));

  it('grants in queue order, and each release tells only the next waiter', async () => {
    const lock = await fresh();
    expect(await lock.acquire('h:1')).toBe(0);
    expect(await lock.acquire('h:1')).toBe(0); // resent: renews only
    expect(await raw.hgetall(lock.name)).toEqual({ 'h:1': '1' });
    const waits = [];
    for (const owner of ['a:1', 'b:1', 'c:1']) waits.push(waitOf(await lock.acquire(owner)));
    expect(await raw.lrange(lock.queue, 0, -1)).toEqual(['a:1', 'b:1', 'c:1']);
    // The head waits for the holder's lease; each next one for the deadline of the one ahead.
    expect(waits[0]).toBeGreaterThan(29_000);
    expect(waits[0]).toBeLessThanOrEqual(30_000);
    // (less the time between the calls: generous on a busy machine)
    expect(waits[1]).toBeGreaterThan(waits[0] + 4_000);
    expect(waits[2]).toBeGreaterThan(waits[1] + 4_000);
    const deadlines = await raw.zrange(lock.timeouts, '0', '-1', 'WITHSCORES');
    expect(deadlines.filter((_, i) => i % 2 === 0)).toEqual(['a:1', 'b:1', 'c:1']);

    expect(await lock.release('h:1', 'h')).toBe(1); // one client listens on a's channel
    expect(await suite.listener.next(lock.channelOf('a:1'))).toBe('0');
    expect(await lock.acquire('c:1')).toBeLessThan(0); // free, but a comes first
    expect(await lock.acquire('d:1')).toBeLessThan(0); // a newcomer queues at the end
    expect(await lock.acquire('a:1')).toBe(0);
    expect(await raw.lrange(lock.queue, 0, -1)).toEqual(['b:1', 'c:1', 'd:1']);
    expect(await raw.zscore(lock.timeouts, 'a:1')).toBeNull();

    for (const [holder, next] of [
      ['a:1', 'b:1'],
      ['b:1', 'c:1'],
      ['c:1', 'd:1'],
    ]) {
      expect(await lock.release(holder, holder)).toBe(1);
      expect(await suite.listener.next(lock.channelOf(next))).toBe('0');
      expect(await lock.acquire(next)).toBe(0);
    }
    expect(suite.listener.on(`redisson_lock__channel:{${lock.name}}`)).toEqual([]);
    // Nobody queued: the plain lock's channel is told.
    expect(await lock.release('d:1', 'd')).toBe(1);
    expect(await suite.listener.next(`redisson_lock__channel:{${lock.name}}`)).toBe('0');
    expect(suite.listener.messages).toHaveLength(5); // one per handoff, to its waiter only, and that
    expect(await raw.exists(lock.name, lock.queue, lock.timeouts, lock.turn)).toBe(0);
  });

  it('a single attempt does not queue; a waiter coming back keeps its place, deadline raised', async () => {
    const lock = await fresh();
    expect(await lock.acquire('h:1')).toBe(0);
    expect(await lock.acquire('a:1', { join: false })).toBeLessThan(0);
    expect(await raw.exists(lock.queue, lock.timeouts)).toBe(0);
    expect(await lock.acquire('a:1', { place: 1_000 })).toBeLessThan(0);
    expect(await lock.acquire('b:1', { place: 1_000 })).toBeLessThan(0);
    const first = Number(await raw.zscore(lock.timeouts, 'a:1'));
    await raw.pexpire(lock.name, 60_000); // the holder renewed past what a expected
    const before = await redisNow();
    expect(waitOf(await lock.acquire('a:1', { place: 1_000 }))).toBeGreaterThan(59_000);
    const raised = Number(await raw.zscore(lock.timeouts, 'a:1'));
    expect(raised).toBeGreaterThan(first);
    expect(raised).toBeGreaterThanOrEqual(before + 60_000 + 1_000 - 50);
    expect(await raw.lrange(lock.queue, 0, -1)).toEqual(['a:1', 'b:1']);
    // An attempt with a shorter expected wait never lowers a deadline.
    await raw.pexpire(lock.name, 10_000);
    expect(await lock.acquire('a:1', { place: 1_000 })).toBeLessThan(0);
    expect(Number(await raw.zscore(lock.timeouts, 'a:1'))).toBe(raised);
  });

  it('a waiter that gives up leaves the queue; if it was told, the next one is told', async () => {
    const lock = await fresh();
    expect(await lock.acquire('h:1')).toBe(0);
    for (const owner of ['a:1', 'b:1', 'c:1']) expect(await lock.acquire(owner)).toBeLessThan(0);
    expect(await lock.leave('b:1')).toBe(1);
    expect(await lock.leave('b:1')).toBe(0);
    expect(await raw.lrange(lock.queue, 0, -1)).toEqual(['a:1', 'c:1']);
    expect(await raw.zscore(lock.timeouts, 'b:1')).toBeNull();
    expect(suite.listener.messages).toEqual([]); // the lock is held: nobody to tell

    expect(await lock.release('h:1', 'h')).toBe(1);
    expect(await suite.listener.next(lock.channelOf('a:1'))).toBe('0');
    expect(await lock.leave('a:1')).toBe(1); // gave up just as it was told
    expect(await suite.listener.next(lock.channelOf('c:1'))).toBe('0');
    expect(await lock.acquire('c:1')).toBe(0);
    expect(suite.listener.on(lock.channelOf('b:1'))).toEqual([]);
  });

  it('purges a waiter whose place timed out, and serves the next one', async () => {
    const lock = await fresh();
    expect(await lock.acquire('h:1', { lease: 100 })).toBe(0); // a holder that will die
    expect(await lock.acquire('a:1', { place: 300 })).toBeLessThan(0); // a waiter that will die
    expect(await lock.acquire('b:1', { place: 300 })).toBeLessThan(0);
    await sleep(150); // the holder's lease ran out; a's place is kept until ~400 ms
    expect(await raw.exists(lock.name)).toBe(0);
    const wait = waitOf(await lock.acquire('b:1', { place: 300 }));
    expect(wait).toBeGreaterThan(0); // a still has its place: b waits for a's deadline
    expect(wait).toBeLessThanOrEqual(300);
    await sleep(wait + 10);
    expect(await lock.acquire('b:1', { place: 300 })).toBe(0);
    expect(await raw.exists(lock.queue, lock.timeouts)).toBe(0);
  });

  it('a release skips dead waiters and tells the first live one', async () => {
    const lock = await fresh();
    expect(await lock.acquire('h:1')).toBe(0);
    for (const owner of ['a:1', 'b:1', 'c:1']) expect(await lock.acquire(owner)).toBeLessThan(0);
    const past = (await redisNow()) - 1;
    await raw.zadd(lock.timeouts, past, 'a:1', past, 'b:1'); // as if a and b died long ago
    expect(await lock.release('h:1', 'h')).toBe(1);
    expect(await suite.listener.next(lock.channelOf('c:1'))).toBe('0');
    expect(await raw.lrange(lock.queue, 0, -1)).toEqual(['c:1']);
    expect(await raw.zrange(lock.timeouts, '0', '-1')).toEqual(['c:1']);
    expect(suite.listener.on(lock.channelOf('a:1'))).toEqual([]);
  });

  it('an attempt that purges the head of a free lock tells the new head', async () => {
    const lock = await fresh();
    expect(await lock.acquire('h:1')).toBe(0);
    for (const owner of ['a:1', 'b:1', 'c:1']) expect(await lock.acquire(owner)).toBeLessThan(0);
    expect(await lock.release('h:1', 'h')).toBe(1); // a is told but has died
    await raw.zadd(lock.timeouts, (await redisNow()) - 1, 'a:1');
    expect(await lock.acquire('c:1')).toBeLessThan(0);
    expect(await suite.listener.next(lock.channelOf('b:1'))).toBe('0');
    expect(await lock.acquire('b:1')).toBe(0);
  });

  it('survives queue entries without a deadline (the deadline set evicted or edited)', async () => {
    const lock = await fresh();
    expect(await lock.acquire('h:1')).toBe(0);
    for (const owner of ['a:1', 'b:1', 'c:1']) expect(await lock.acquire(owner)).toBeLessThan(0);
    expect(await lock.release('h:1', 'h')).toBe(1);
    await raw.zrem(lock.timeouts, 'b:1');
    expect(await lock.acquire('c:1')).toBe(-1); // the one ahead has no deadline: not a grant
    expect(await raw.exists(lock.name)).toBe(0);
    await raw.del(lock.timeouts); // no deadline left: such entries are dropped at the head
    expect(await lock.acquire('c:1')).toBe(0);
    expect(await raw.exists(lock.queue)).toBe(0);
  });

  it('a release sent again returns its first answer; a non-owner touches nothing', async () => {
    const lock = await fresh();
    expect(await lock.acquire('h:1')).toBe(0);
    expect(await lock.acquire('a:1')).toBeLessThan(0);
    expect(await lock.release('b:1', 'x')).toBeNull();
    expect(await raw.hgetall(lock.name)).toEqual({ 'h:1': '1' });
    expect(await raw.lrange(lock.queue, 0, -1)).toEqual(['a:1']);
    expect(await raw.keys(`redisson_unlock_latch:{${lock.name}}:*`)).toEqual([]);
    expect(await lock.release('h:1', 'h')).toBe(1);
    expect(await lock.release('h:1', 'h')).toBe(1);
    expect(await lock.release('h:1', 'y')).toBeNull();
    expect(await suite.listener.next(lock.channelOf('a:1'))).toBe('0');
    expect(suite.listener.on(lock.channelOf('a:1'))).toEqual(['0']); // told once, not on the resend
  });

  it('force unlock deletes the lock, clears the queue and tells every waiter', async () => {
    const lock = await fresh();
    expect(await lock.acquire('h:1')).toBe(0);
    for (const owner of ['a:1', 'b:1']) expect(await lock.acquire(owner)).toBeLessThan(0);
    expect(await lock.forceUnlock()).toBe(1);
    expect(await suite.listener.next(lock.channelOf('a:1'))).toBe('0');
    expect(await suite.listener.next(lock.channelOf('b:1'))).toBe('0');
    expect(await raw.exists(lock.name, lock.queue, lock.timeouts)).toBe(0);
    expect(await lock.forceUnlock()).toBe(0);
    expect(await lock.acquire('b:1')).toBe(0); // whoever comes back first
  });
});
