import { Injectable } from '@nestjs/common';
import {
  type LockHandle,
  LockLostError,
  LockOptionsError,
  LockRedisError,
  LockService,
  Locked,
  MemoryLockStore,
} from '../../lib';
import { lockApp, storeAppEach } from '../support/lock-app';
import type { TestRedis } from '../support/redis-server';
import { RedissonSide } from '../support/redisson-side';
import { STORE_KINDS, suiteStore } from '../support/suite-store';
import { aborted, CHILDREN_TIMEOUT } from './family-kit';
import { killChildren, startChild, type LockChild } from './rw-fair-kit';
import { sleep, until } from '../../tools/time';

// Children take long to start on a busy machine (see CHILDREN_TIMEOUT).
jest.setTimeout(CHILDREN_TIMEOUT);

/** Takes the fair lock `queue:<0>` by decorator and records who got in, in order. */
@Injectable()
class Tickets {
  readonly served: number[] = [];
  constructor(readonly locks: LockService) {}

  @Locked('queue:<0>', { fair: true })
  async serve(queue: string, ticket: number): Promise<boolean | undefined> {
    this.served.push(ticket);
    await Promise.resolve();
    return this.locks.current(`queue:${queue}`)?.fair;
  }
}

describe.each(STORE_KINDS)('fair locks on the %s store', (kind) => {
  const suite = storeAppEach(kind, { leaseTime: 600, waitTime: 5_000 });

  it('carries fair on the handle, re-enters, and forceUnlock aborts the holder', async () => {
    const { locks } = suite;
    const lock = await locks.acquire('f', { fair: true });
    expect(lock.fair).toBe(true);
    expect(lock.mode).toBeUndefined();
    await locks.runAs(lock, () =>
      locks.run('f', (inner) => expect(inner.depth).toBe(2), { fair: true }),
    );
    expect(await locks.isLocked('f')).toBe(true);
    expect(await locks.forceUnlock('f')).toBe(true);
    expect(await aborted(lock.signal)).toBeInstanceOf(LockLostError);
    expect(await locks.isLocked('f')).toBe(false);
    // A long lease of its own: what is checked is that the lost handle's release does not free
    // the new holder's lock, not a 600 ms lease's renewal (it was read free once in a CI run).
    const next = await locks.detach(() => locks.acquire('f', { fair: true, leaseTime: 30_000 }));
    await expect(lock.release()).rejects.toThrow(LockLostError);
    expect(await locks.isLocked('f')).toBe(true); // the new holder's lock stays
    await next.release();
  });

  it('serves local waiters in arrival order; one that times out or is aborted leaves the queue', async () => {
    const { locks, prefix, store } = suite;
    const holder = await locks.acquire('f', { fair: true });
    const order: string[] = [];
    const waiter = (name: string, options: object = {}) =>
      locks.detach(() =>
        locks.run('f', () => void order.push(name), { fair: true, waitTime: 5_000, ...options }),
      );
    const controller = new AbortController();
    const a = waiter('a');
    const timesOut = waiter('late', { waitTime: 100 });
    const abortedOne = waiter('aborted', { signal: controller.signal });
    const b = waiter('b');
    await expect(timesOut).rejects.toThrow();
    controller.abort();
    await expect(abortedOne).rejects.toThrow();
    if (store.raw) expect(await store.raw.llen(`redisson_lock_queue:{${prefix}f}`)).toBe(2);
    await holder.release();
    await Promise.all([a, b]);
    expect(order).toEqual(['a', 'b']);
  });

  it('@Locked with fair: true serves callers in arrival order', async () => {
    const { locks, prefix, store } = suite;
    const other = await lockApp(store.target, { keyPrefix: prefix }, { providers: [Tickets] });
    try {
      const tickets = other.app.get(Tickets);
      const holder = await locks.acquire('queue:q', { fair: true });
      const calls = [1, 2, 3, 4].map((ticket) => tickets.serve('q', ticket));
      await holder.release();
      expect(await Promise.all(calls)).toEqual([true, true, true, true]);
      expect(tickets.served).toEqual([1, 2, 3, 4]);
    } finally {
      await other.app.close();
    }
  });

  it('refuses fair with mode or fencing (LockOptionsError)', async () => {
    const { locks } = suite;
    for (const options of [
      { fair: true, mode: 'write' },
      { fair: true, fencing: true },
    ]) {
      await expect(locks.acquire('f', options as never)).rejects.toThrow(LockOptionsError);
    }
  });
});

describe('fair locks on Redis across processes', () => {
  const suite = storeAppEach('redis', { leaseTime: 600, waitTime: 5_000, fairQueueTimeout: 300 });
  afterEach(killChildren);
  const queueLength = () => suite.store.raw!.llen(`redisson_lock_queue:{${suite.prefix}f}`);

  it('grants 8 waiters in 4 processes in arrival order', async () => {
    const { locks, prefix, store } = suite;
    const children = await Promise.all(
      [0, 1, 2, 3].map(() =>
        startChild((store.target as TestRedis).url, prefix, { fairQueueTimeout: 2_000 }),
      ),
    );
    // A lease of its own: the suite's 600 ms one can run out in a loaded run's stall, and the
    // first waiter would take the lock before the queue is complete.
    const holder = await locks.acquire('f', { fair: true, leaseTime: 30_000 });
    const arrival: [string, LockChild][] = [];
    for (let i = 0; i < 8; i++) {
      const child = children[(i * 3) % 4];
      child.send(`acquire w${i} f fair 20000`);
      arrival.push([`w${i}`, child]);
      await until(async () => (await queueLength()) === i + 1);
    }
    const granted: string[] = [];
    await holder.release();
    for (let n = 0; n < 8; n++) {
      const pending = arrival.filter(([id]) => !granted.includes(id));
      const [line] = await Promise.race(
        pending.map(([id, child]) => child.line(new RegExp(`^held ${id}$`), 20_000)),
      );
      const id = line.split(' ')[1];
      granted.push(id);
      const child = arrival.find(([name]) => name === id)![1];
      child.send(`release ${id}`);
      await child.line(new RegExp(`^released ${id}$`));
    }
    expect(granted).toEqual(arrival.map(([id]) => id));
    expect(await queueLength()).toBe(0);
  });

  it('a SIGKILLed waiter delays the next one by its place timeout, not the default', async () => {
    const { locks, prefix, store } = suite;
    const child = await startChild((store.target as TestRedis).url, prefix, {
      fairQueueTimeout: 300,
    });
    const holder = await locks.acquire('f', { fair: true });
    child.send('acquire dead f fair 20000');
    await until(async () => (await queueLength()) === 1);
    const next = locks.detach(() => locks.acquire('f', { fair: true, waitTime: 3_000 }));
    await until(async () => (await queueLength()) === 2);
    child.process.kill('SIGKILL');
    await holder.release();
    // The dead waiter is at the head; the default place timeout (5 s) would outlast waitTime.
    const lock = await next;
    await lock.release();
    expect(await queueLength()).toBe(0);
  });

  it('forceUnlock of a fair lock clears its queue', async () => {
    const { locks } = suite;
    const holder = await locks.acquire('f', { fair: true });
    const controller = new AbortController();
    const waiting = locks.detach(() =>
      locks.acquire('f', { fair: true, waitTime: 5_000, signal: controller.signal }),
    );
    await until(async () => (await queueLength()) === 1);
    expect(await locks.forceUnlock('f')).toBe(true);
    expect(await aborted(holder.signal)).toBeInstanceOf(LockLostError);
    // Told by the force-unlock and served: its hold is rightful, not one of those force-unlocked.
    const lock = await waiting;
    expect(lock.signal.aborted).toBe(false);
    expect(await queueLength()).toBe(0);
    await lock.release();
  });
});

// Store calls that go wrong for a fair waiter, made to happen on the memory store.
describe('fair waiters whose store call goes wrong', () => {
  const store = suiteStore('memory');

  it('leaves the queue when its first attempt queued it but the answer was lost', async () => {
    const { app, locks } = await lockApp(store.target, { waitTime: 2_000 });
    const table = store.target as MemoryLockStore;
    try {
      const holder = await locks.acquire('f', { fair: true });
      // The attempt reaches the store (the waiter is queued), then the connection drops.
      jest.spyOn(table, 'acquire').mockImplementationOnce((request) => {
        MemoryLockStore.prototype.acquire.call(table, request);
        const lost = new LockRedisError(request.key, 'acquire', new Error('connection lost'));
        return { then: (_: unknown, reject: (error: unknown) => void) => reject(lost) } as never;
      });
      const failed = locks.detach(() => locks.acquire('f', { fair: true }));
      await expect(failed).rejects.toBeInstanceOf(LockRedisError);
      const next = locks.detach(() => locks.acquire('f', { fair: true }));
      await holder.release();
      // Not held up by the failed waiter's place (fairQueueTimeout: 5 s, beyond this wait).
      await (await next).release();
    } finally {
      await app.close();
    }
  });

  it('rejects with the abort and frees the lock it was granted', async () => {
    const { app, locks } = await lockApp(store.target, { waitTime: 5_000 });
    const table = store.target as MemoryLockStore;
    try {
      const holder = await locks.acquire('f', { fair: true });
      const controller = new AbortController();
      // The store grants the waiter's attempt, and the caller aborts before the answer arrives.
      jest.spyOn(table, 'acquire').mockImplementation((request) => {
        const reply = MemoryLockStore.prototype.acquire.call(table, request);
        if (reply.granted && request.kind === 'fair') controller.abort(new Error('stop'));
        return reply;
      });
      const waiting = locks.detach(() =>
        locks.acquire('f', { fair: true, signal: controller.signal }),
      );
      await holder.release();
      await expect(waiting).rejects.toThrow('stop');
      expect(await locks.isLocked('f')).toBe(false);
      expect(locks.heldCount).toBe(0);
    } finally {
      await app.close();
    }
  });
});

// Holders keep a 20 s lease, waiters wait 20 s and fair ones renew their place every 20 s: a
// waiter let in within 5 s of the release was woken by it.
describe.each(STORE_KINDS)('plain and fair waiters of one name on the %s store', (kind) => {
  const suite = storeAppEach(kind, {
    leaseTime: 20_000,
    waitTime: 20_000,
    fairQueueTimeout: 60_000,
  });

  it('a plain release wakes a fair waiter', async () => {
    const { locks, prefix, store } = suite;
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
    const { locks } = suite;
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
  const suite = storeAppEach('redis', {
    leaseTime: 10_000,
    waitTime: 5_000,
    fairQueueTimeout: 300,
    syncTimeout: 50,
  });
  afterEach(killChildren);
  const queueLength = () => suite.store.raw!.llen(`redisson_lock_queue:{${suite.prefix}f}`);

  it('a SIGKILLed waiter delays the next one by its place timeout after its turn, not the lease', async () => {
    const { locks, prefix, store } = suite;
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
    const { locks, prefix, store } = suite;
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
    const { locks, prefix, store } = suite;
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
