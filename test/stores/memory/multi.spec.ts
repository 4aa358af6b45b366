import type { LockTarget } from '../../../lib/store/lock-store';
import { delivered, hold, MemoryLockStore, request, ttlOf, waiting } from './memory-fixtures';

const names = ['m1', 'm2', 'm3'];
const group: LockTarget = { kind: 'multi', key: names.join(', '), name: 'm1', names };
const member = (name: string): LockTarget => ({ kind: 'lock', key: name, name });
/** The group's acquire by `owner`. */
const attempt = (owner: string, leaseTime = 5_000) =>
  request('multi', 'm1', owner, { key: group.key, names, leaseTime });
/** The group's hold of `owner`. */
const held = (owner: string) => hold('multi', 'm1', owner, { key: group.key, names });

describe('MemoryLockStore: groups of locks (multi-acquire.lua, multi-release.lua)', () => {
  let store: MemoryLockStore;
  beforeEach(() => (store = new MemoryLockStore()));

  it('takes every member as an ordinary plain lock of the owner', () => {
    expect(store.acquire(attempt('g:1'))).toEqual({ granted: true, fencingToken: undefined });
    for (const name of names) {
      expect(store.acquire(request('lock', name, 'x:1')).granted).toBe(false);
      expect(store.remainingTtl(member(name))).toBeGreaterThan(4_900);
    }
    expect(store.remainingTtl(group)).toBeGreaterThan(4_900);
    // A member is the owner's plain lock: it can be renewed and released as one.
    expect(store.renew([hold('lock', 'm2', 'g:1')], 1_000)).toEqual([true]);
    expect(store.remainingTtl(group)).toBeLessThanOrEqual(1_000);
    // A resent acquire of the group only renews it.
    expect(store.acquire(attempt('g:1')).granted).toBe(true);
    expect(store.remainingTtl(group)).toBeGreaterThan(4_900);
  });

  it('takes nothing when a member is busy, and names the first busy one with its lease', () => {
    store.acquire(request('lock', 'm3', 'x:1', { leaseTime: 1_000 }));
    store.acquire(request('read', 'm2', 'r:1', { leaseTime: 2_000 }));
    const reply = store.acquire(attempt('g:1'));
    expect(reply).toMatchObject({ granted: false, busy: 1 });
    expect(ttlOf(reply)).toBeGreaterThan(1_900);
    expect(store.remainingTtl(member('m1'))).toBeNull(); // nothing was written
    expect(store.remainingTtl(group)).toBeNull();
    store.release(hold('read', 'm2', 'r:1'));
    expect(store.acquire(attempt('g:1'))).toMatchObject({ granted: false, busy: 2 });
    store.release(hold('lock', 'm3', 'x:1'));
    expect(store.acquire(attempt('g:1')).granted).toBe(true);
  });

  it('releases every member, telling each member’s plain-lock waiters: the most told', async () => {
    const [w1, w2] = [
      await waiting(store, member('m1'), 'x:1'),
      await waiting(store, member('m2'), 'x:1'),
    ];
    await w1.client.subscribe(store.connect().channel(member('m2'), 'x:1'));
    store.acquire(attempt('g:1'));
    expect(store.release(held('g:1'))).toBe(2); // m2: two connections
    for (const name of names) expect(store.remainingTtl(member(name))).toBeNull();
    expect(store.release(held('g:1'))).toBe(2); // sent again: the first answer
    await delivered();
    expect(w1.notices).toHaveLength(2);
    expect(w2.notices).toHaveLength(1);
  });

  it('answers null for a group with a lost member, still freeing the others', () => {
    store.acquire(attempt('g:1'));
    store.forceUnlock(member('m2'));
    store.acquire(request('lock', 'm2', 'other:1'));
    expect(store.renew([held('g:1')], 5_000)).toEqual([false]);
    expect(store.release(held('g:1'))).toBeNull();
    expect(store.remainingTtl(member('m1'))).toBeNull();
    expect(store.remainingTtl(member('m3'))).toBeNull();
    // The other owner's member is untouched; a resend still answers null.
    expect(store.remainingTtl(member('m2'))).toBeGreaterThan(0);
    expect(store.release(held('g:1'))).toBeNull();
  });

  it('forceUnlock of a group frees every member', () => {
    store.acquire(attempt('g:1'));
    expect(store.forceUnlock(group)).toBe(true);
    expect(store.remainingTtl(group)).toBeNull();
    expect(store.forceUnlock(group)).toBe(false);
  });
});
