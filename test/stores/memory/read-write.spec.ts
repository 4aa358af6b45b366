import './date-clock';
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

const read: LockTarget = { kind: 'read', key: 'rw', name: 'rw' };
const write: LockTarget = { kind: 'write', key: 'rw', name: 'rw' };
const plain: LockTarget = { kind: 'lock', key: 'rw', name: 'rw' };

describe('MemoryLockStore: read-write locks (read-*.lua, write-*.lua, rw-force-unlock.lua)', () => {
  let store: MemoryLockStore;
  storeOnFakeClock((made) => (store = made));

  it('lets readers share the lock (shared grants) and keeps writers out until the last one leaves', () => {
    expect([kindOf('read').shared, kindOf('write').shared]).toEqual([true, false]);
    expect(store.acquire(request('read', 'rw', 'a:1'))).toEqual({
      granted: true,
      fencingToken: undefined,
    });
    expect(store.acquire(request('read', 'rw', 'b:1'))).toMatchObject({
      granted: true,
    });
    expect(ttlOf(store.acquire(request('write', 'rw', 'w:1')))).toBeGreaterThan(4_900);
    expect(store.remainingTtl(read)).toBeGreaterThan(4_900);
    expect(store.remainingTtl(write)).toBeNull();
    expect(store.release(hold('read', 'rw', 'a:1'))).toBe(0); // b still reads: nobody told
    expect(store.acquire(request('write', 'rw', 'w:1')).granted).toBe(false);
    expect(store.release(hold('read', 'rw', 'b:1'))).toBe(0); // freed, but no subscriber
    expect(store.acquire(request('write', 'rw', 'w:1'))).toEqual({
      granted: true,
      fencingToken: undefined,
    });
  });

  it('lets a writer exclude readers and other writers; a resent write acquire only renews', () => {
    store.acquire(request('write', 'rw', 'w:1', { leaseTime: 1_000 }));
    expect(ttlOf(store.acquire(request('read', 'rw', 'r:1')))).toBeGreaterThan(900);
    expect(store.acquire(request('write', 'rw', 'w:2')).granted).toBe(false);
    expect(store.acquire(request('write', 'rw', 'w:1', { leaseTime: 3_000 })).granted).toBe(true);
    expect(store.remainingTtl(write)).toBeGreaterThan(2_900);
    expect(store.remainingTtl(read)).toBeNull();
    expect(store.release(hold('write', 'rw', 'w:1'))).toBe(0);
    expect(store.remainingTtl(write)).toBeNull();
    expect(store.acquire(request('read', 'rw', 'r:1')).granted).toBe(true);
  });

  it('excludes a plain, fair or group lock of the same name, both ways', () => {
    store.acquire(request('read', 'rw', 'r:1'));
    expect(store.acquire(request('lock', 'rw', 'x:1')).granted).toBe(false);
    expect(store.acquire(request('fair', 'rw', 'x:2', { queue: false })).granted).toBe(false);
    expect(store.acquire(request('multi', 'rw', 'x:3', { names: ['other', 'rw'] }))).toMatchObject({
      granted: false,
      busy: 1,
    });
    expect(store.remainingTtl(plain)).toBeGreaterThan(0); // whatever lives under the name
    store.release(hold('read', 'rw', 'r:1'));
    store.acquire(request('lock', 'rw', 'x:1'));
    expect(store.acquire(request('read', 'rw', 'r:2')).granted).toBe(false);
    expect(store.acquire(request('write', 'rw', 'w:1')).granted).toBe(false);
    expect(store.remainingTtl(read)).toBeNull();
    expect(store.remainingTtl(write)).toBeNull();
    expect(store.renew([hold('read', 'rw', 'x:1'), hold('write', 'rw', 'x:1')], 1_000)).toEqual([
      false,
      false,
    ]);
  });

  it('downgrades: the writer may also read, then release the write and keep reading', () => {
    store.acquire(request('write', 'rw', 'd:1'));
    expect(store.acquire(request('read', 'rw', 'd:1')).granted).toBe(true);
    expect(store.acquire(request('read', 'rw', 'other:1')).granted).toBe(false);
    // Its read release leaves the lock held (its write hold): nobody is told.
    expect(store.release(hold('read', 'rw', 'd:1'))).toBe(0);
    expect(store.remainingTtl(write)).toBeGreaterThan(0);
    store.acquire(request('read', 'rw', 'd:1'));
    expect(store.release(hold('write', 'rw', 'd:1'))).toBe(0);
    // Now in read mode, held by d's read: others read, nobody writes.
    expect(store.remainingTtl(read)).toBeGreaterThan(0);
    expect(store.acquire(request('read', 'rw', 'other:1')).granted).toBe(true);
    expect(store.acquire(request('write', 'rw', 'w:9')).granted).toBe(false);
    // A resent write release of d gets its first answer; its read hold is a separate one.
    expect(store.release(hold('write', 'rw', 'd:1'))).toBe(0);
    expect(store.renew([hold('read', 'rw', 'd:1')], 1_000)).toEqual([true]);
  });

  it('refuses a write to an owner that reads (no upgrade)', () => {
    store.acquire(request('read', 'rw', 'u:1'));
    expect(store.acquire(request('write', 'rw', 'u:1')).granted).toBe(false);
  });

  it('drops a dead reader’s lease while a live one renews; the last live release frees the lock', async () => {
    const waiter = await waiting(store, write, 'w:1');
    store.acquire(request('read', 'rw', 'dead:1', { leaseTime: 1_000 }));
    store.acquire(request('read', 'rw', 'live:1', { leaseTime: 1_000 }));
    for (let i = 0; i < 5; i++) {
      jest.advanceTimersByTime(600);
      expect(store.renew([hold('read', 'rw', 'live:1')], 1_000)).toEqual([true]);
    }
    // 3 s on: the dead reader's lease is long over, the lock lives on with the live one's.
    expect(store.remainingTtl(read)).toBeGreaterThan(900);
    expect(store.acquire(request('write', 'rw', 'w:1')).granted).toBe(false);
    // The live reader leaves: only a dead one remains, so the lock is free and the waiter told.
    expect(store.release(hold('read', 'rw', 'live:1'))).toBe(1);
    expect(store.remainingTtl(read)).toBeNull();
    await delivered();
    expect(waiter.notices).toHaveLength(1);
    expect(store.acquire(request('write', 'rw', 'w:1')).granted).toBe(true);
  });

  it('keeps the lock for a remaining live reader’s lease after another leaves, then lets it lapse', () => {
    store.acquire(request('read', 'rw', 'long:1', { leaseTime: 3_000 }));
    store.acquire(request('read', 'rw', 'short:1', { leaseTime: 1_000 }));
    jest.advanceTimersByTime(500);
    expect(store.release(hold('read', 'rw', 'long:1'))).toBe(0);
    // The lock's lease shrinks to the longest remaining read lease (short's, 500 ms left).
    expect(store.remainingTtl(read)).toBeLessThanOrEqual(500);
    jest.advanceTimersByTime(501);
    expect(store.remainingTtl(read)).toBeNull();
    expect(store.release(hold('read', 'rw', 'short:1'))).toBeNull();
    expect(store.renew([hold('read', 'rw', 'short:1')], 1_000)).toEqual([false]);
  });

  it('notifies read-write waiters only on the read-write channel, on every write release', async () => {
    const rw = await waiting(store, read, 'x:1');
    const lockWaiter = await waiting(store, plain, 'x:1');
    store.acquire(request('write', 'rw', 'w:1'));
    store.acquire(request('read', 'rw', 'w:1'));
    expect(store.release(hold('write', 'rw', 'w:1'))).toBe(1); // downgraded: readers may come
    expect(store.release(hold('read', 'rw', 'w:1'))).toBe(1);
    await delivered();
    expect(rw.notices).toHaveLength(2);
    expect(lockWaiter.notices).toEqual([]);
  });

  it('forceUnlock of the name frees every reader and the writer and tells read-write waiters', async () => {
    const rw = await waiting(store, read, 'x:1');
    store.acquire(request('read', 'rw', 'a:1'));
    store.acquire(request('read', 'rw', 'b:1'));
    expect(store.forceUnlock(plain)).toBe(true);
    expect(store.remainingTtl(read)).toBeNull();
    expect(store.renew([hold('read', 'rw', 'a:1')], 1_000)).toEqual([false]);
    expect(store.release(hold('read', 'rw', 'b:1'))).toBeNull();
    expect(store.forceUnlock(plain)).toBe(false);
    store.acquire(request('write', 'rw', 'w:1'));
    expect(store.forceUnlock(write)).toBe(true);
    expect(store.acquire(request('write', 'rw', 'w:2')).granted).toBe(true);
    await delivered();
    expect(rw.notices).toHaveLength(2);
  });
});
