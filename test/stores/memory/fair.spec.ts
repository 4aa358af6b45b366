import './date-clock';
import type { LockTarget } from '../../../lib/store/lock-store';
import {
  delivered,
  hold,
  type MemoryLockStore,
  request,
  storeOnFakeClock,
  ttlOf,
  type Recording,
  waiting,
} from './memory-fixtures';

const fair: LockTarget = { kind: 'fair', key: 'f', name: 'f' };
const plain: LockTarget = { kind: 'lock', key: 'f', name: 'f' };

/** A fair acquire of lock 'f' by `owner`, queued with a place timeout of 1 s. */
const attempt = (owner: string, extra = {}) =>
  request('fair', 'f', owner, { leaseTime: 10_000, placeTimeout: 1_000, ...extra });

describe('MemoryLockStore: fair locks (fair-acquire/release/leave/force-unlock.lua)', () => {
  let store: MemoryLockStore;
  /** Each waiter's connection, subscribed to its own turn channel. */
  let waiters: Record<string, Recording>;
  storeOnFakeClock((made) => (store = made));
  beforeEach(async () => {
    waiters = {};
    for (const owner of ['a:1', 'b:1', 'c:1']) {
      waiters[owner] = await waiting(store, fair, owner);
    }
  });

  /** How many turn notices each of a, b, c got. */
  const told = async () => {
    await delivered();
    return ['a:1', 'b:1', 'c:1'].map((owner) => waiters[owner].notices.length);
  };

  it('grants in queue order and tells only the queue head, on its own channel', async () => {
    const lockWaiter = await waiting(store, plain, 'x:1');
    expect(store.acquire(attempt('a:1'))).toEqual({ granted: true, fencingToken: undefined });
    // b then c queue; b waits for the holder's lease, c for b's deadline.
    expect(ttlOf(store.acquire(attempt('b:1')))).toBe(10_000);
    expect(ttlOf(store.acquire(attempt('c:1')))).toBe(11_000);
    expect(store.release(hold('fair', 'f', 'a:1'))).toBe(1);
    expect(await told()).toEqual([0, 1, 0]);
    expect(lockWaiter.notices).toEqual([]);
    // The lock is free but b is the head: c is refused, b is granted.
    expect(store.acquire(attempt('c:1')).granted).toBe(false);
    expect(store.acquire(attempt('b:1')).granted).toBe(true);
    expect(store.release(hold('fair', 'f', 'b:1'))).toBe(1);
    expect(await told()).toEqual([0, 1, 1]);
    expect(store.acquire(attempt('c:1')).granted).toBe(true);
    // The queue is empty: a release tells the plain lock's channel; sent again, the same answer.
    expect(store.release(hold('fair', 'f', 'c:1'))).toBe(1);
    expect(store.release(hold('fair', 'f', 'c:1'))).toBe(1);
    await delivered();
    expect(lockWaiter.notices).toHaveLength(1);
    expect(store.release(hold('fair', 'f', 'x:9'))).toBeNull();
  });

  it('is the plain lock of the name: each excludes the other, and a resent fair acquire renews', () => {
    store.acquire(request('lock', 'f', 'p:1', { leaseTime: 2_000 }));
    expect(ttlOf(store.acquire(attempt('a:1')))).toBe(2_000);
    store.release(hold('lock', 'f', 'p:1'));
    expect(store.acquire(attempt('a:1')).granted).toBe(true);
    expect(store.acquire(request('lock', 'f', 'p:2')).granted).toBe(false);
    expect(store.acquire(attempt('a:1', { leaseTime: 30_000 })).granted).toBe(true);
    expect(store.remainingTtl(fair)).toBe(30_000);
    expect(store.remainingTtl(plain)).toBe(30_000);
    expect(store.renew([hold('fair', 'f', 'a:1')], 1_000)).toEqual([true]);
    expect(store.remainingTtl(fair)).toBe(1_000);
  });

  it('lets a waiter that leaves hand the turn it was told to the next', async () => {
    store.acquire(attempt('a:1'));
    store.acquire(attempt('b:1'));
    store.acquire(attempt('c:1'));
    store.release(hold('fair', 'f', 'a:1')); // tells b
    store.leave(attempt('b:1')); // b gives up: c is the head of a free lock, so it is told
    expect(await told()).toEqual([0, 1, 1]);
    expect(store.acquire(attempt('c:1')).granted).toBe(true);
    // Leaving behind a held lock tells nobody.
    store.acquire(attempt('a:1'));
    store.acquire(attempt('b:1'));
    store.leave(attempt('a:1'));
    expect(await told()).toEqual([0, 1, 1]);
    store.release(hold('fair', 'f', 'c:1'));
    expect(await told()).toEqual([0, 2, 1]);
  });

  it('drops a waiter that does not come back within its place timeout after its turn', async () => {
    store.acquire(attempt('a:1', { leaseTime: 1_000 }));
    store.acquire(attempt('b:1')); // deadline: 1 000 (the lease) + 1 000 (place timeout)
    store.acquire(attempt('c:1'));
    store.release(hold('fair', 'f', 'a:1')); // b's turn comes now, 1 000 before the lease end
    expect(await told()).toEqual([0, 1, 0]);
    // b never comes back; c's retries are refused while b keeps its place: the place timeout
    // from its turn (before: from the lease end, 1 999 ms).
    jest.advanceTimersByTime(999);
    expect(store.acquire(attempt('c:1')).granted).toBe(false);
    jest.advanceTimersByTime(1);
    expect(store.acquire(attempt('c:1')).granted).toBe(true);
  });

  it('keeps deadlines from drifting under churn; a dead head then costs its place timeout', async () => {
    const owners = ['a:1', 'b:1', 'c:1'];
    store.acquire(attempt('x:1'));
    for (const owner of owners) store.acquire(attempt(owner));
    let holder = 'x:1';
    const queue = [...owners];
    for (let i = 0; i < 40; i++) {
      jest.advanceTimersByTime(10);
      store.release(hold('fair', 'f', holder));
      const head = queue.shift()!;
      expect(store.acquire(attempt(head)).granted).toBe(true);
      expect(store.acquire(attempt(holder)).granted).toBe(false);
      queue.push(holder);
      holder = head;
    }
    // The last of three waits for at most the lease plus two place timeouts (before: one more
    // place timeout per hand-off, 40 s).
    expect(ttlOf(store.acquire(attempt(queue[2])))).toBeLessThanOrEqual(10_000 + 2 * 1_000);
    await delivered();
    // The head dies; once the holder releases, the next waits at most one place timeout.
    store.release(hold('fair', 'f', holder));
    expect(ttlOf(store.acquire(attempt(queue[1])))).toBeLessThanOrEqual(1_000);
    jest.advanceTimersByTime(1_000);
    expect(store.acquire(attempt(queue[1])).granted).toBe(true);
  });

  it('keeps a place that is renewed by coming back, however long the holder holds', () => {
    store.acquire(attempt('a:1', { leaseTime: 1_000 }));
    store.acquire(attempt('b:1'));
    for (let i = 0; i < 5; i++) {
      jest.advanceTimersByTime(900);
      store.renew([hold('fair', 'f', 'a:1')], 1_000);
      expect(store.acquire(attempt('b:1')).granted).toBe(false);
    }
    store.acquire(attempt('c:1'));
    store.release(hold('fair', 'f', 'a:1'));
    expect(store.acquire(attempt('c:1')).granted).toBe(false);
    expect(store.acquire(attempt('b:1')).granted).toBe(true);
  });

  it('makes a single try (queue: false) that leaves no trace', async () => {
    store.acquire(attempt('a:1'));
    expect(store.acquire(attempt('b:1', { queue: false })).granted).toBe(false);
    store.acquire(attempt('c:1'));
    store.release(hold('fair', 'f', 'a:1'));
    expect(await told()).toEqual([0, 0, 1]);
    expect(store.acquire(attempt('b:1', { queue: false })).granted).toBe(false);
    expect(store.acquire(attempt('c:1')).granted).toBe(true);
  });

  it('forceUnlock frees the lock, clears the queue and tells every waiter', async () => {
    store.acquire(attempt('a:1'));
    store.acquire(attempt('b:1'));
    store.acquire(attempt('c:1'));
    expect(store.forceUnlock(plain)).toBe(true);
    expect(await told()).toEqual([0, 1, 1]);
    // The queue is gone: whoever comes first takes it.
    expect(store.acquire(attempt('c:1')).granted).toBe(true);
    expect(store.release(hold('fair', 'f', 'a:1'))).toBeNull();
    expect(store.forceUnlock(fair)).toBe(true);
    expect(store.forceUnlock(fair)).toBe(false);
  });
});
