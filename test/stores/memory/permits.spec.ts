import './date-clock';
import { LockKeyError } from '../../../lib';
import { kindOf } from '../../../lib/core/kinds';
import type { LockTarget } from '../../../lib/store/lock-store';
import {
  delivered,
  hold,
  type MemoryLockStore,
  request,
  storeOnFakeClock,
  ttlOf,
  waiting,
} from './memory-fixtures';

/** The semaphore 's' with a limit of `permits`. */
const semaphore = (permits = 2): LockTarget => ({ kind: 'permit', key: 's', name: 's', permits });
/** A permit acquire of 's' by `owner` (limit 2 unless given). */
const attempt = (owner: string, leaseTime = 1_000, permits = 2) =>
  request('permit', 's', owner, { leaseTime, permits });
const permit = (owner: string, permits = 2) => hold('permit', 's', owner, { permits });

describe('MemoryLockStore: semaphores of leased permits (semaphore-*.lua)', () => {
  let store: MemoryLockStore;
  storeOnFakeClock((made) => (store = made));

  it('grants up to the limit, each grant shared (the next waiter tries), and counts what is available', () => {
    // Shared is the kind's (its descriptor): the next waiter tries at once after each grant.
    expect(kindOf('permit').shared).toBe(true);
    expect(store.available(semaphore())).toBe(2);
    expect(store.acquire(attempt('a:1'))).toEqual({
      granted: true,
      fencingToken: undefined,
    });
    expect(store.available(semaphore())).toBe(1);
    // The last permit too: the next waiter learns its own wait (its limit may be larger).
    expect(store.acquire(attempt('b:1'))).toEqual({
      granted: true,
      fencingToken: undefined,
    });
    expect(store.available(semaphore())).toBe(0);
    expect(store.acquire(attempt('c:1')).granted).toBe(false);
    // A resent acquire of a holder keeps its one permit.
    expect(store.acquire(attempt('a:1')).granted).toBe(true);
    expect(store.available(semaphore(3))).toBe(1);
    // Another caller's larger limit is its own.
    expect(store.acquire(attempt('c:1', 1_000, 3))).toMatchObject({ granted: true });
    expect(store.available(semaphore())).toBe(0);
  });

  it('refuses with the time until the permit that frees the caller’s limit expires', () => {
    store.acquire(attempt('a:1', 3_000, 3));
    store.acquire(attempt('b:1', 1_000, 3));
    store.acquire(attempt('c:1', 2_000, 3));
    // Limit 2 with 3 held: the second permit to end (c's, 2 000 ms) frees a place.
    expect(ttlOf(store.acquire(attempt('d:1', 5_000, 2)))).toBe(2_000);
    // Limit 3: the first to end (b's).
    expect(ttlOf(store.acquire(attempt('d:1', 5_000, 3)))).toBe(1_000);
  });

  it('gives a permit back when its lease ends unless renewed', () => {
    store.acquire(attempt('a:1'));
    store.acquire(attempt('b:1'));
    jest.advanceTimersByTime(800);
    expect(store.renew([permit('a:1'), permit('x:1')], 1_000)).toEqual([true, false]);
    jest.advanceTimersByTime(200);
    expect(store.available(semaphore())).toBe(1); // b's lapsed
    expect(store.renew([permit('b:1')], 1_000)).toEqual([false]); // never revived
    expect(store.release(permit('b:1'))).toBeNull();
    expect(store.acquire(attempt('c:1')).granted).toBe(true);
    expect(store.remainingTtl(semaphore())).toBe(1_000); // the longest remaining lease
    jest.advanceTimersByTime(1_000);
    expect(store.remainingTtl(semaphore())).toBeNull();
    expect(store.available(semaphore())).toBe(2);
  });

  it('tells the semaphore’s waiters on its own channel; a resent release gets the first answer', async () => {
    const waiter = await waiting(store, semaphore(), 'w:1');
    const lockWaiter = await waiting(store, { kind: 'lock', key: 's', name: 's' }, 'w:1');
    store.acquire(attempt('a:1'));
    expect(store.release(permit('a:1'))).toBe(1);
    expect(store.release(permit('a:1'))).toBe(1);
    expect(store.release(permit('z:1'))).toBeNull();
    await delivered();
    expect(waiter.notices).toHaveLength(1);
    expect(lockWaiter.notices).toEqual([]);
  });

  it('shares its name with no lock, as one Redis key holds one type (LockKeyError both ways)', () => {
    store.acquire(request('lock', 's', 'x:1'));
    expect(() => store.acquire(attempt('a:1'))).toThrow(LockKeyError);
    expect(() => store.available(semaphore())).toThrow(LockKeyError);
    expect(store.release(hold('lock', 's', 'x:1'))).toBe(0);
    expect(store.acquire(attempt('a:1')).granted).toBe(true);
    expect(store.release(permit('a:1'))).toBe(0);
    // The name stays the semaphore's when no permit is held (Redis keeps its count key).
    const lock = { kind: 'lock', key: 's', name: 's' } as const;
    expect(() => store.acquire(request('lock', 's', 'x:2'))).toThrow(LockKeyError);
    expect(() => store.remainingTtl(lock)).toThrow(LockKeyError);
    expect(() => store.forceUnlock(lock)).toThrow(LockKeyError);
  });

  it('forceUnlock revokes every permit and tells the waiters; false when none was held', async () => {
    const waiter = await waiting(store, semaphore(), 'w:1');
    store.acquire(attempt('a:1'));
    store.acquire(attempt('b:1'));
    expect(store.forceUnlock(semaphore())).toBe(true);
    expect(store.available(semaphore())).toBe(2);
    expect(store.renew([permit('a:1')], 1_000)).toEqual([false]);
    expect(store.release(permit('b:1'))).toBeNull();
    expect(store.forceUnlock(semaphore())).toBe(false);
    await delivered();
    expect(waiter.notices).toHaveLength(1);
  });
});
