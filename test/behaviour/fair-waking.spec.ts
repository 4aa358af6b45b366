import { type LockHandle, LockRedisError, type LockService } from '../../lib';
import { lockAppEach } from '../support/lock-app';
import type { TestRedis } from '../support/redis-server';
import { RedissonSide } from '../support/redisson-side';
import { STORE_KINDS, suiteStore } from '../support/suite-store';
import { CHILDREN_TIMEOUT } from './family-kit';
import { killChildren, startChild } from './rw-fair-kit';
import { sleep, until } from '../../tools/time';

// Children take long to start on a busy machine (see CHILDREN_TIMEOUT).
jest.setTimeout(CHILDREN_TIMEOUT);

// Holders keep a 20 s lease, waiters wait 20 s and fair ones renew their place every 20 s: a
// waiter let in within 5 s of the release was woken by it.
describe.each(STORE_KINDS)('plain and fair waiters of one name on the %s store', (kind) => {
  let locks: LockService;
  let prefix: string;
  const store = suiteStore(kind);
  lockAppEach(
    store,
    { leaseTime: 20_000, waitTime: 20_000, fairQueueTimeout: 60_000 },
    (made) => ({ locks, prefix } = made),
  );

  it('a plain release wakes a fair waiter', async () => {
    const holder = await locks.acquire('pf');
    let got: LockHandle | undefined;
    const waiter = locks
      .detach(() => locks.acquire('pf', { fair: true }))
      .then((lock) => {
        got = lock;
      });
    const queue = `redisson_lock_queue:{${prefix}pf}`;
    if (store.raw) await until(async () => (await store.raw!.llen(queue)) === 1);
    else await sleep(50);
    await holder.release();
    await until(() => got !== undefined); // before: at the holder's lease end, 20 s
    await waiter;
    expect(got!.fair).toBe(true);
    await got!.release();
  });

  it('a fair release with nobody queued wakes a plain waiter and a multi-lock waiter', async () => {
    const holder = await locks.acquire('fp', { fair: true });
    const plain = locks.detach(() => locks.run('fp', () => 'plain'));
    const multi = locks.detach(() => locks.run(['fp', 'other'], () => 'multi'));
    await sleep(50); // both have tried once and wait
    const done: string[] = [];
    void Promise.all([plain, multi]).then((results) => done.push(...results));
    await holder.release();
    await until(() => done.length === 2); // before: at the holder's lease end, 20 s
    expect(done).toEqual(['plain', 'multi']);
  });
});

describe('fair waiters on Redis: dead waiters, replicas, Redisson waiters ahead', () => {
  let locks: LockService;
  let prefix: string;
  const store = suiteStore('redis');
  lockAppEach(
    store,
    { leaseTime: 10_000, waitTime: 5_000, fairQueueTimeout: 300, syncTimeout: 50 },
    (made) => ({ locks, prefix } = made),
  );
  afterEach(killChildren);
  const queueLength = () => store.raw!.llen(`redisson_lock_queue:{${prefix}f}`);

  it('a SIGKILLed waiter delays the next one by its place timeout after its turn, not the lease', async () => {
    const child = await startChild((store.target as TestRedis).url, prefix, {
      fairQueueTimeout: 300,
    });
    const holder = await locks.acquire('f', { fair: true }); // a 10 s lease
    child.send('acquire dead f fair 20000');
    await until(async () => (await queueLength()) === 1);
    const next = locks.detach(() => locks.acquire('f', { fair: true, waitTime: 3_000 }));
    await until(async () => (await queueLength()) === 2);
    child.process.kill('SIGKILL');
    await holder.release(); // ~10 s before the lease end: the dead waiter's turn comes now
    const lock = await next; // before: it waited out the lease + 300 ms, past its 3 s
    await lock.release();
    expect(await queueLength()).toBe(0);
  });

  it('with syncReplicas and no replica, a fair acquire retries within its wait and leaves no trace', async () => {
    const started = performance.now();
    const failed = locks.acquire('f', { fair: true, syncReplicas: 1, waitTime: 1_000 });
    await expect(failed).rejects.toThrow(LockRedisError);
    await expect(failed).rejects.toThrow(/0 of the 1 replicas required/);
    // Retried until the wait was over (before: it gave up at the first undone grant, ~60 ms).
    expect(performance.now() - started).toBeGreaterThanOrEqual(1_000 - 20);
    expect(await queueLength()).toBe(0);
    expect(await store.raw!.exists(`${prefix}f`)).toBe(0);
  });

  it('our waiter behind a Redisson waiter that holds longer than our place timeout keeps its turn', async () => {
    const java = new RedissonSide(store.raw!);
    const name = `${prefix}f`;
    // A Redisson holder (lease 500 ms), a Redisson lock() waiter (its wait: 5 min), ours, then
    // another Redisson lock() waiter.
    expect(await java.fairTryLock(name, 0, 500, 300_000)).toBeNull();
    expect(await java.fairTryLock(name, 1, 30_000, 300_000)).toBeGreaterThan(0);
    const ours = locks.detach(() => locks.acquire('f', { fair: true, waitTime: 10_000 }));
    await until(async () => (await queueLength()) === 2);
    expect(await java.fairTryLock(name, 2, 30_000, 300_000)).toBeGreaterThan(0);
    // The holder's watchdog renews, and it holds past the first waiter's expected turn by more
    // than our place timeout (300 ms).
    await store.raw!.pexpire(name, 30_000);
    await sleep(1_000);
    expect(await java.fairUnlock(name, 0)).toBe(1);
    expect(await java.fairTryLock(name, 1, 30_000, 300_000)).toBeNull();
    await sleep(1_000); // the new Redisson holder holds past our place timeout too
    expect(await java.fairUnlock(name, 1)).toBe(1);
    // Before: our waiter was dropped by these scripts and the later Redisson waiter went first.
    expect(await java.fairTryLock(name, 2, 30_000, 300_000)).not.toBeNull();
    const lock = await ours;
    expect(await java.fairTryLock(name, 2, 30_000, 300_000)).not.toBeNull();
    await lock.release();
    expect(await java.fairTryLock(name, 2, 30_000, 300_000)).toBeNull();
    expect(await java.fairUnlock(name, 2)).toBe(1);
  }, 20_000);
});
