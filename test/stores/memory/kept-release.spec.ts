import { MemoryLockStore } from '../../../lib';
import { sleep } from '../../../tools/time';

// The memory store's side of holdAtLeast: release-kept.lua's semantics in one process.
describe('MemoryLockStore releaseKept', () => {
  const target = { kind: 'lock', key: 'job', name: 'p:job' } as const;
  const request = (owner: string) => ({ ...target, owner, leaseTime: 30_000, fencing: false });

  it('keeps the owner’s lock for the period, tells nobody, and a resend moves nothing', async () => {
    const store = new MemoryLockStore();
    const client = store.connect();
    const told: string[] = [];
    client.listen({ notice: (channel) => told.push(channel), reconnected: () => undefined });
    await client.subscribe(client.channel(target, 'w:1'));
    expect(store.acquire(request('me:1')).granted).toBe(true);
    expect(store.releaseKept(request('me:1'), 200)).toBe(true);
    const first = store.remainingTtl(target)!;
    expect(first).toBeLessThanOrEqual(200);
    expect(store.acquire(request('other:1')).granted).toBe(false);
    await sleep(30);
    expect(store.releaseKept(request('me:1'), 200)).toBe(true); // the same release sent again
    expect(store.remainingTtl(target)).toBeLessThan(first);
    await sleep(200);
    expect(store.remainingTtl(target)).toBeNull(); // expired, as Redis expires the hash
    expect(told).toEqual([]);
  });

  it('leaves nothing a renewal can stretch, as release-kept.lua', () => {
    const store = new MemoryLockStore();
    expect(store.acquire(request('me:3')).granted).toBe(true);
    expect(store.releaseKept(request('me:3'), 200)).toBe(true);
    expect(store.renew([request('me:3')], 30_000)).toEqual([false]);
    expect(store.remainingTtl(target)).toBeLessThanOrEqual(200);
    expect(store.acquire(request('other:3')).granted).toBe(false);
  });

  it('touches nothing of another owner, and answers false for a lock it does not hold', () => {
    const store = new MemoryLockStore();
    expect(store.acquire(request('other:2')).granted).toBe(true);
    expect(store.releaseKept(request('me:2'), 10)).toBe(false);
    expect(store.remainingTtl(target)).toBeGreaterThan(29_000);
    expect(store.releaseKept({ ...request('me:2'), name: 'p:free' }, 10)).toBe(false);
  });
});
