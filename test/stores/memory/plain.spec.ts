import { MemoryLockStore } from '../../../lib/stores/memory/memory-store';
import { delivered, hold, recording, request, ttlOf } from './memory-fixtures';
import { sleep } from '../../../tools/time';

/** A plain lock target of `name`. */
const lock = (name: string) => ({ kind: 'lock', key: name, name }) as const;

describe('MemoryLockStore: plain locks (what acquire/release/renew/force-unlock.lua do, in memory)', () => {
  let store: MemoryLockStore;
  beforeEach(() => (store = new MemoryLockStore()));

  it('grants a free lock, answers busy with the holder’s remaining lease, renews a resent acquire', async () => {
    const client = store.connect();
    expect(await client.acquire(request('lock', 'a', 'x:1', { leaseTime: 1_000 }))).toEqual({
      granted: true,
      fencingToken: undefined,
    });
    const ttl = ttlOf(await client.acquire(request('lock', 'a', 'y:1')));
    expect(ttl).toBeGreaterThan(900);
    expect(ttl).toBeLessThanOrEqual(1_000);
    // The same owner's acquire sent again: granted, lease set to the new one, still one hold.
    expect((await client.acquire(request('lock', 'a', 'x:1', { leaseTime: 3_000 }))).granted).toBe(
      true,
    );
    expect(await client.remainingTtl(lock('a'))).toBeGreaterThan(2_900);
    expect(await client.release(hold('lock', 'a', 'x:1'))).toBe(0);
    expect(await client.remainingTtl(lock('a'))).toBeNull();
  });

  it('issues growing fencing tokens when asked, for plain locks only', async () => {
    const client = store.connect();
    const tokens: number[] = [];
    for (let i = 1; i <= 3; i++) {
      const reply = await client.acquire(request('lock', 'f', `x:${i}`, { fencing: true }));
      tokens.push((reply as { fencingToken: number }).fencingToken);
      await client.release(hold('lock', 'f', `x:${i}`));
    }
    expect(tokens[1]).toBeGreaterThan(tokens[0]);
    expect(tokens[2]).toBeGreaterThan(tokens[1]);
    const fair = await client.acquire(request('fair', 'g', 'x:9', { fencing: true }));
    expect(fair).toEqual({ granted: true, fencingToken: undefined });
  });

  it('expires a lease without a notice; the former owner’s release and renew find nothing', async () => {
    const { client, notices } = await recording(store, plainChannel(store, 'e'));
    await client.acquire(request('lock', 'e', 'x:1', { leaseTime: 40 }));
    await sleep(80);
    expect(await client.remainingTtl(lock('e'))).toBeNull();
    expect(await client.renew([hold('lock', 'e', 'x:1')], 1_000)).toEqual([false]);
    expect(await client.release(hold('lock', 'e', 'x:1'))).toBeNull();
    await delivered();
    expect(notices).toEqual([]);
  });

  it('releases idempotently; a non-owner’s release answers null and touches nothing', async () => {
    const holder = store.connect();
    await recording(store, holder.channel(lock('r'), 'w:1'));
    await holder.acquire(request('lock', 'r', 'x:1'));
    expect(await holder.release(hold('lock', 'r', 'y:1'))).toBeNull();
    expect(await holder.remainingTtl(lock('r'))).toBeGreaterThan(0);
    expect(await holder.release(hold('lock', 'r', 'x:1'))).toBe(1);
    // Sent again (a resent command): the first answer, not null.
    expect(await holder.release(hold('lock', 'r', 'x:1'))).toBe(1);
    // Another owner that takes it meanwhile is not released by the resent one.
    await holder.acquire(request('lock', 'r', 'z:1'));
    expect(await holder.release(hold('lock', 'r', 'x:1'))).toBe(1);
    expect(await holder.remainingTtl(lock('r'))).toBeGreaterThan(0);
  });

  it('renews a batch of mixed kinds, one answer per hold', async () => {
    const client = store.connect();
    await client.acquire(request('lock', 'b1', 'x:1', { leaseTime: 100 }));
    await client.acquire(request('lock', 'b2', 'x:2', { leaseTime: 100 }));
    await client.acquire(request('read', 'b4', 'x:4', { leaseTime: 100 }));
    await client.acquire(request('permit', 'b5', 'x:5', { leaseTime: 100, permits: 2 }));
    const holds = [
      hold('lock', 'b1', 'x:1'),
      hold('lock', 'b2', 'other:1'),
      hold('lock', 'b3', 'x:3'),
      hold('read', 'b4', 'x:4'),
      hold('write', 'b4', 'x:4'),
      hold('permit', 'b5', 'x:5', { permits: 2 }),
    ];
    expect(await client.renew(holds, 2_000)).toEqual([true, false, false, true, false, true]);
    expect(await client.remainingTtl(lock('b1'))).toBeGreaterThan(1_900);
    expect(await client.remainingTtl(lock('b2'))).toBeLessThanOrEqual(100);
    expect(await client.remainingTtl({ kind: 'read', key: 'b4', name: 'b4' })).toBeGreaterThan(
      1_900,
    );
  });

  it('sends notices to subscribed connections only, after the release has answered', async () => {
    const channel = plainChannel(store, 'n');
    const a = await recording(store, channel);
    const b = await recording(store, channel);
    await b.client.unsubscribe(channel);
    const c = await recording(store, channel);
    await c.client.close();
    await a.client.acquire(request('lock', 'n', 'x:1'));
    // Called on the store itself: the answer is there, the notice is not yet.
    expect(store.release(hold('lock', 'n', 'x:1'))).toBe(1); // a only
    expect(a.notices).toEqual([]);
    await delivered();
    expect(a.notices).toEqual([channel]);
    expect(b.notices).toEqual([]);
    expect(c.notices).toEqual([]);
  });

  it('forceUnlock deletes a held lock and notifies; false when there is none', async () => {
    const { client, notices } = await recording(store, plainChannel(store, 'u'));
    await client.acquire(request('lock', 'u', 'x:1'));
    expect(await client.forceUnlock(lock('u'))).toBe(true);
    expect(await client.remainingTtl(lock('u'))).toBeNull();
    expect(await client.forceUnlock(lock('u'))).toBe(false);
    await delivered();
    expect(notices).toEqual([plainChannel(store, 'u')]);
  });

  it('routes each family to its own channel: plain and group members share one, fair waiters have their own', () => {
    const client = store.connect();
    const plain = client.channel(lock('c'), 'x:1');
    expect(client.channel(lock('c'), 'y:1')).toBe(plain);
    expect(
      client.channel({ kind: 'multi', key: 'c, d', name: 'c', names: ['c', 'd'] }, 'x:1'),
    ).toBe(plain);
    const read = client.channel({ kind: 'read', key: 'c', name: 'c' }, 'x:1');
    expect(client.channel({ kind: 'write', key: 'c', name: 'c' }, 'y:1')).toBe(read);
    const permit = client.channel({ kind: 'permit', key: 'c', name: 'c', permits: 2 }, 'x:1');
    const fairX = client.channel({ kind: 'fair', key: 'c', name: 'c' }, 'x:1');
    const fairY = client.channel({ kind: 'fair', key: 'c', name: 'c' }, 'y:1');
    expect(new Set([plain, read, permit, fairX, fairY]).size).toBe(5);
    // A name that looks like another's channel suffix does not collide.
    expect(client.channel(lock('c:x:1'), 'z:1')).not.toBe(fairX);
    expect(client.channel(lock('d'), 'x:1')).not.toBe(plain);
  });

  it('passes a turn on as a notice on the lock’s channel, to every subscriber, and changes no hold', async () => {
    const channel = plainChannel(store, 'a');
    const first = await recording(store, channel);
    const second = await recording(store, channel);
    const other = await recording(store, plainChannel(store, 'b'));
    const client = store.connect();
    await client.acquire(request('lock', 'a', 'x:1'));
    await client.passTurn(channel);
    await delivered();
    expect(first.notices).toEqual([channel]);
    expect(second.notices).toEqual([channel]);
    expect(other.notices).toEqual([]);
    expect(await client.remainingTtl(lock('a'))).toBeGreaterThan(0); // still held
  });

  it('keeps separate stores apart', async () => {
    const other = new MemoryLockStore();
    await store.connect().acquire(request('lock', 's', 'x:1'));
    expect((await other.connect().acquire(request('lock', 's', 'y:1'))).granted).toBe(true);
  });
});

/** The plain-lock channel of `name` in `store`. */
function plainChannel(store: MemoryLockStore, name: string): string {
  return store.connect().channel(lock(name), 'any:1');
}
