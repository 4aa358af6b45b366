import type { Redis } from 'ioredis';
import { RedissonSide, type Wake } from '../../../support/redisson-side';
import { fairLock, renewAll } from './script-kit';
import { scriptSuite } from './script-suite';
import { sleep } from '../../../../tools/time';

/** Redisson's fairLockWaitTimeout in these tests, as our fairQueueTimeout: 5 s. */
const WAIT = 5_000;

describe('fair lock: our scripts and Redisson’s share one queue', () => {
  const suite = scriptSuite();
  let raw: Redis;
  let java: RedissonSide;
  const fresh = async (...owners: string[]) => {
    const lock = fairLock(raw, suite.fresh('fairx'));
    await suite.listen(...owners.map(lock.channelOf));
    return lock;
  };
  /**
   * A Redisson thread waiting for the lock (tryLock with a wait); resolves once it is queued, with
   * `got`: what woke its successful attempt.
   */
  const javaWaiter = async (name: string, thread: number) => {
    let queued!: () => void;
    const isQueued = new Promise<void>((resolve) => (queued = resolve));
    const got: Promise<Wake> = java.waitFor(
      java.fairChannel(name, thread),
      () => java.fairTryLock(name, thread, 30_000, WAIT),
      20_000,
      () => queued(),
    );
    await isQueued;
    return { got };
  };
  beforeAll(() => {
    raw = suite.raw;
    java = new RedissonSide(raw);
  });

  it('a Redisson waiter keeps its place among ours and is told its turn by our release', async () => {
    const lock = await fresh('h:1', 'a:1', 'b:1');
    expect(await lock.acquire('h:1')).toBe(0);
    expect(await lock.acquire('a:1')).toBeLessThan(0);
    const java1 = await javaWaiter(lock.name, 1);
    expect(await lock.acquire('b:1')).toBeLessThan(0);
    expect(await raw.lrange(lock.queue, 0, -1)).toEqual(['a:1', java.owner(1), 'b:1']);

    expect(await lock.release('h:1', 'h')).toBe(1);
    expect(await suite.listener.next(lock.channelOf('a:1'))).toBe('0');
    expect(await lock.acquire('b:1')).toBeLessThan(0); // b keeps its turn behind the Redisson one
    expect(await lock.acquire('a:1')).toBe(0);
    expect(await lock.release('a:1', 'a')).toBe(1); // told the Redisson waiter, nobody else
    expect(await java1.got).toBe('message');
    expect(await raw.hgetall(lock.name)).toEqual({ [java.owner(1)]: '1' });
    expect(await lock.acquire('b:1')).toBeLessThan(0);
    expect(await raw.lrange(lock.queue, 0, -1)).toEqual(['b:1']); // not purged by its catch-up

    expect(await java.fairUnlock(lock.name, 1)).toBe(1);
    expect(await suite.listener.next(lock.channelOf('b:1'))).toBe('0');
    expect(await lock.acquire('b:1')).toBe(0);
    expect(suite.listener.messages.map(([channel]) => channel)).toEqual([
      lock.channelOf('a:1'),
      lock.channelOf('b:1'),
    ]);
  });

  it('our waiter keeps its place among Redisson waiters', async () => {
    const lock = await fresh('a:1');
    expect(await java.fairTryLock(lock.name, 1, 30_000, WAIT)).toBeNull();
    expect(await lock.acquire('a:1')).toBeLessThan(0);
    const java2 = await javaWaiter(lock.name, 2);
    expect(await raw.lrange(lock.queue, 0, -1)).toEqual(['a:1', java.owner(2)]);

    expect(await java.fairUnlock(lock.name, 1)).toBe(1);
    expect(await suite.listener.next(lock.channelOf('a:1'))).toBe('0');
    expect(await java.fairTryLock(lock.name, 2, 30_000, WAIT)).toBeGreaterThanOrEqual(0);
    expect(await lock.acquire('a:1')).toBe(0);
    expect(await lock.release('a:1', 'a')).toBe(1);
    expect(await java2.got).toBe('message');
    expect(await java.fairUnlock(lock.name, 2)).toBe(1);
    expect(await raw.exists(lock.name, lock.queue, lock.timeouts)).toBe(0);
  });

  it('a Redisson waiter that gives up leaves our waiters in order', async () => {
    const lock = await fresh('a:1', 'b:1');
    expect(await lock.acquire('h:1')).toBe(0);
    expect(await lock.acquire('a:1')).toBeLessThan(0);
    expect(await java.fairTryLock(lock.name, 1, 30_000, WAIT)).toBeGreaterThan(0);
    expect(await lock.acquire('b:1')).toBeLessThan(0);
    await java.fairGiveUp(lock.name, 1, WAIT);
    expect(await raw.lrange(lock.queue, 0, -1)).toEqual(['a:1', 'b:1']);
    expect(await lock.release('h:1', 'h')).toBe(1);
    expect(await lock.acquire('a:1')).toBe(0);
    expect(await lock.release('a:1', 'a')).toBe(1);
    expect(await lock.acquire('b:1')).toBe(0);
    // Its turn was announced once (the message may reach the listener after the script's reply).
    expect(await suite.listener.next(lock.channelOf('b:1'))).toBe('0');
    expect(suite.listener.on(lock.channelOf('b:1'))).toEqual(['0']);
  });

  /**
   * Redisson's grant takes the grantee's wait (fairLockWaitTimeout, 5 min for lock()) off every
   * deadline, ours too. Ours are measured from the queue's turn, which our scripts keep at the
   * holder's lease end (the holder renewed past what the Redisson waiter expected) and set to the
   * release's time, so after that grant our waiter still has its place timeout, within which it
   * comes back (every third of it) and renews. Before: it was past its deadline at once, and
   * dropped (the Redisson waiter behind it served first).
   */
  it('our waiter behind a Redisson waiter keeps its place after Redisson takes its late turn', async () => {
    const place = 1_500;
    const lock = await fresh('a:1');
    const renew = async () => expect(await lock.acquire('a:1', { place })).toBeLessThan(0);
    expect(await lock.acquire('h:1', { lease: 300 })).toBe(0);
    expect(await java.fairTryLock(lock.name, 1, 30_000, 300_000)).toBeGreaterThan(0);
    await renew();
    expect(await java.fairTryLock(lock.name, 2, 30_000, 300_000)).toBeGreaterThan(0);
    expect(await raw.lrange(lock.queue, 0, -1)).toEqual([java.owner(1), 'a:1', java.owner(2)]);
    expect(await renewAll(raw, 30_000, [{ kind: 'l', keys: [lock.name], owner: 'h:1' }])).toEqual([
      1,
    ]);
    await sleep(2 * place); // the holder holds past the Redisson waiter's turn + our place
    await renew();
    expect(await lock.release('h:1', 'h')).toBe(0); // told the Redisson waiter, not listening
    expect(await java.fairTryLock(lock.name, 1, 30_000, 300_000)).toBeNull();
    // The Redisson holder holds past our waiter's place timeout; our waiter renews meanwhile.
    for (let i = 0; i < 5; i++) {
      await renew();
      await sleep(place / 4);
    }
    expect(await raw.lrange(lock.queue, 0, -1)).toEqual(['a:1', java.owner(2)]);
    expect(await java.fairUnlock(lock.name, 1)).toBe(1);
    expect(await suite.listener.next(lock.channelOf('a:1'))).toBe('0');
    expect(await java.fairTryLock(lock.name, 2, 30_000, 300_000)).toBeGreaterThanOrEqual(0);
    expect(await lock.acquire('a:1', { place })).toBe(0);
    expect(await raw.lrange(lock.queue, 0, -1)).toEqual([java.owner(2)]);
  });
});
