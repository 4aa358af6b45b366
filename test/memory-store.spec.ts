import { MemoryLockStore } from '../lib';
import type { NoticeListener } from '../lib/engine/store/lock-store';
import { sleep } from './support/lock-app';

/** An acquire request of lock `name` for `owner`. */
const request = (name: string, owner: string, leaseTime = 5_000, fencing = false) => ({
  key: name,
  name,
  owner,
  leaseTime,
  fencing,
});

/** A listener that records the notices it gets. */
function recorder(): NoticeListener & { notices: string[] } {
  const notices: string[] = [];
  return { notices, notice: (name) => notices.push(name), reconnected: () => undefined };
}

describe('MemoryLockStore (what the Redis scripts do, in memory)', () => {
  let store: MemoryLockStore;
  beforeEach(() => (store = new MemoryLockStore()));

  it('grants a free lock, answers busy with the holder’s remaining lease, renews a resent acquire', async () => {
    const client = store.connect();
    expect(await client.acquire(request('a', 'x:1', 1_000))).toEqual({
      granted: true,
      fencingToken: undefined,
    });
    const busy = await client.acquire(request('a', 'y:1'));
    expect(busy.granted).toBe(false);
    const ttl = (busy as { ttl: number }).ttl;
    expect(ttl).toBeGreaterThan(900);
    expect(ttl).toBeLessThanOrEqual(1_000);
    // The same owner's acquire sent again: granted, lease set to the new one, still one hold.
    expect((await client.acquire(request('a', 'x:1', 3_000))).granted).toBe(true);
    expect(await client.remainingTtl('a', 'a')).toBeGreaterThan(2_900);
    expect(await client.release({ key: 'a', name: 'a', owner: 'x:1' })).toBe(0);
    expect(await client.remainingTtl('a', 'a')).toBeNull();
  });

  it('issues growing fencing tokens when asked', async () => {
    const client = store.connect();
    const tokens: number[] = [];
    for (let i = 1; i <= 3; i++) {
      const reply = await client.acquire(request('f', `x:${i}`, 1_000, true));
      tokens.push((reply as { fencingToken: number }).fencingToken);
      await client.release({ key: 'f', name: 'f', owner: `x:${i}` });
    }
    expect(tokens[1]).toBeGreaterThan(tokens[0]);
    expect(tokens[2]).toBeGreaterThan(tokens[1]);
  });

  it('expires a lease without a notice; the former owner’s release and renew find nothing', async () => {
    const client = store.connect();
    const listener = recorder();
    client.listen(listener);
    await client.subscribe('e');
    await client.acquire(request('e', 'x:1', 40));
    await sleep(80);
    expect(await client.remainingTtl('e', 'e')).toBeNull();
    expect(await client.renew([{ key: 'e', name: 'e', owner: 'x:1' }], 1_000)).toEqual([false]);
    expect(await client.release({ key: 'e', name: 'e', owner: 'x:1' })).toBeNull();
    await sleep(5);
    expect(listener.notices).toEqual([]);
  });

  it('releases idempotently; a non-owner’s release answers null and touches nothing', async () => {
    const holder = store.connect();
    const waiter = store.connect();
    await waiter.subscribe('r');
    await holder.acquire(request('r', 'x:1'));
    expect(await holder.release({ key: 'r', name: 'r', owner: 'y:1' })).toBeNull();
    expect(await holder.remainingTtl('r', 'r')).toBeGreaterThan(0);
    expect(await holder.release({ key: 'r', name: 'r', owner: 'x:1' })).toBe(1);
    // Sent again (a resent command): the first answer, not null.
    expect(await holder.release({ key: 'r', name: 'r', owner: 'x:1' })).toBe(1);
    // Another owner that takes it meanwhile is not released by the resent one.
    await holder.acquire(request('r', 'z:1'));
    expect(await holder.release({ key: 'r', name: 'r', owner: 'x:1' })).toBe(1);
    expect(await holder.remainingTtl('r', 'r')).toBeGreaterThan(0);
  });

  it('renews a batch, one answer per hold', async () => {
    const client = store.connect();
    await client.acquire(request('b1', 'x:1', 100));
    await client.acquire(request('b2', 'x:2', 100));
    const holds = [
      { key: 'b1', name: 'b1', owner: 'x:1' },
      { key: 'b2', name: 'b2', owner: 'other:1' },
      { key: 'b3', name: 'b3', owner: 'x:3' },
    ];
    expect(await client.renew(holds, 2_000)).toEqual([true, false, false]);
    expect(await client.remainingTtl('b1', 'b1')).toBeGreaterThan(1_900);
    expect(await client.remainingTtl('b2', 'b2')).toBeLessThanOrEqual(100);
  });

  it('sends release notices to subscribed connections only, after the release has answered', async () => {
    const [a, b, c] = [store.connect(), store.connect(), store.connect()];
    const [la, lb, lc] = [recorder(), recorder(), recorder()];
    a.listen(la);
    b.listen(lb);
    c.listen(lc);
    await a.subscribe('n');
    await b.subscribe('n');
    await b.unsubscribe('n');
    await c.subscribe('n');
    await c.close();
    await a.acquire(request('n', 'x:1'));
    // Called on the store itself: the answer is there, the notice is not yet.
    expect(store.release({ key: 'n', name: 'n', owner: 'x:1' })).toBe(1); // a only
    expect(la.notices).toEqual([]);
    await new Promise((resolve) => setImmediate(resolve));
    expect(la.notices).toEqual(['n']);
    expect(lb.notices).toEqual([]);
    expect(lc.notices).toEqual([]);
  });

  it('forceUnlock deletes a held lock and notifies; false when there is none', async () => {
    const client = store.connect();
    const listener = recorder();
    client.listen(listener);
    await client.subscribe('u');
    await client.acquire(request('u', 'x:1'));
    expect(await client.forceUnlock('u', 'u')).toBe(true);
    expect(await client.remainingTtl('u', 'u')).toBeNull();
    expect(await client.forceUnlock('u', 'u')).toBe(false);
    await new Promise((resolve) => setImmediate(resolve));
    expect(listener.notices).toEqual(['u']);
  });

  it('keeps separate stores apart', async () => {
    const other = new MemoryLockStore();
    await store.connect().acquire(request('s', 'x:1'));
    expect((await other.connect().acquire(request('s', 'y:1'))).granted).toBe(true);
  });
});
