import type { Redis } from 'ioredis';
import { RedissonSide, type Wake } from '../support/redisson-side';
import { suiteRedis } from '../support/suite-redis';
import { fairLock, Listener, renewAll, sleep } from './script-kit';

/** Redisson's fairLockWaitTimeout in these tests, as our fairQueueTimeout: 5 s. */
const WAIT = 5_000;

describe('fair lock: our scripts and Redisson’s share one queue', () => {
  const server = suiteRedis();
  let raw: Redis;
  let java: RedissonSide;
  let listener: Listener;
  let n = 0;
  const fresh = async (...owners: string[]) => {
    const lock = fairLock(raw, `fairx:${Date.now()}:${++n}`);
    listener = await Listener.open(raw, ...owners.map(lock.channelOf));
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
    raw = server.raw;
    java = new RedissonSide(raw);
  });
  afterEach(() => listener?.close());

  it('a Redisson waiter keeps its place among ours and is told its turn by our release', async () => {
    const lock = await fresh('h:1', 'a:1', 'b:1');
    expect(await lock.acquire('h:1')).toBe(0);
    expect(await lock.acquire('a:1')).toBeLessThan(0);
    const java1 = await javaWaiter(lock.name, 1);
    expect(await lock.acquire('b:1')).toBeLessThan(0);
    expect(await raw.lrange(lock.queue, 0, -1)).toEqual(['a:1', java.owner(1), 'b:1']);

    expect(await lock.release('h:1', 'h')).toBe(1);
    expect(await listener.next(lock.channelOf('a:1'))).toBe('0');
    expect(await lock.acquire('b:1')).toBeLessThan(0); // b keeps its turn behind the Redisson one
    expect(await lock.acquire('a:1')).toBe(0);
    expect(await lock.release('a:1', 'a')).toBe(1); // told the Redisson waiter, nobody else
    expect(await java1.got).toBe('message');
    expect(await raw.hgetall(lock.name)).toEqual({ [java.owner(1)]: '1' });
    expect(await lock.acquire('b:1')).toBeLessThan(0);
    expect(await raw.lrange(lock.queue, 0, -1)).toEqual(['b:1']); // not purged by its catch-up

    expect(await java.fairUnlock(lock.name, 1)).toBe(1);
    expect(await listener.next(lock.channelOf('b:1'))).toBe('0');
    expect(await lock.acquire('b:1')).toBe(0);
    expect(listener.messages.map(([channel]) => channel)).toEqual([
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
    expect(await listener.next(lock.channelOf('a:1'))).toBe('0');
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
    expect(await listener.next(lock.channelOf('b:1'))).toBe('0');
    expect(listener.on(lock.channelOf('b:1'))).toEqual(['0']);
  });

  /**
   * A known break, not fixed (it.failing: green while it lasts, red once fixed). When Redisson
   * grants the lock it takes its own wait (fairLockWaitTimeout, 5 min by default) off every
   * queued deadline, ours included. Ours are the deadline of the waiter ahead plus our
   * fairQueueTimeout (5 s), so once a Redisson waiter's turn comes more than that past its
   * estimate (its holder renewed), our waiter behind it is past its deadline: Redisson's next
   * unlock drops it as a stale head and tells nobody. Scaled down here: place timeout 100 ms,
   * the holder renewed 600 ms past its first lease.
   */
  it.failing(
    'our waiter behind a Redisson waiter keeps its place after Redisson takes its turn',
    async () => {
      const lock = await fresh('a:1');
      expect(await lock.acquire('h:1', { lease: 300 })).toBe(0);
      expect(await java.fairTryLock(lock.name, 1, 30_000, 300_000)).toBeGreaterThan(0);
      expect(await lock.acquire('a:1', { place: 100 })).toBeLessThan(0);
      expect(await renewAll(raw, 30_000, [{ kind: 'l', keys: [lock.name], owner: 'h:1' }])).toEqual(
        [1],
      );
      await sleep(600);
      expect(await lock.release('h:1', 'h')).toBe(0); // told the Redisson waiter, which is not listening
      expect(await java.fairTryLock(lock.name, 1, 30_000, 300_000)).toBeNull();
      expect(await java.fairUnlock(lock.name, 1)).toBe(1);
      expect(await raw.lrange(lock.queue, 0, -1)).toEqual(['a:1']);
      await sleep(50);
      expect(listener.on(lock.channelOf('a:1'))).toEqual(['0']);
    },
  );
});
