import type { LockHandle, LockService } from '../../../lib';
import { lockAppEach } from '../../support/lock-app';
import { prefixName, RedissonSide } from '../../support/redisson-side';
import { suiteStore } from '../../support/suite-store';
import { sleep, until } from '../../../tools/time';

// LockService beside a Java service using Redisson (its steps run by RedissonSide) on one lock.
// Leases are 30 s and waits 10 s: whoever is let in within the wait was woken by a message.
describe('LockService and Redisson share read-write and fair locks', () => {
  const store = suiteStore('redis');
  let locks: LockService;
  let prefix: string;
  let java: RedissonSide;
  lockAppEach(store, { leaseTime: 30_000, waitTime: 10_000 }, (made) => ({ locks, prefix } = made));
  beforeEach(() => (java = new RedissonSide(store.raw!)));

  it('a Redisson writer blocks our readers, and its release lets them all in at once', async () => {
    const name = `${prefix}rw`;
    expect(await java.writeLock(name, 1, 30_000)).toBeNull();
    const held: LockHandle[] = [];
    const readers = [1, 2, 3].map(() =>
      locks.detach(() => locks.acquire('rw', { mode: 'read' })).then((lock) => held.push(lock)),
    );
    await sleep(50);
    expect(held).toHaveLength(0);
    expect(await java.writeUnlock(name, 1)).toBe(1);
    await Promise.all(readers);
    expect(held.map((lock) => lock.mode)).toEqual(['read', 'read', 'read']);
    expect(await java.writeLock(name, 2, 30_000)).toBeGreaterThan(0); // our readers keep it out
    await Promise.all(held.map((lock) => lock.release()));
    expect(await java.writeLock(name, 2, 30_000)).toBeNull();
  });

  it('our writer blocks a Redisson reader, and our release wakes it', async () => {
    const name = `${prefix}rw`;
    const writer = await locks.acquire('rw', { mode: 'write' });
    let released: Promise<void> | undefined;
    const wake = await java.waitFor(
      prefixName('redisson_rwlock', name),
      () => java.readLock(name, 1, 30_000),
      10_000,
      () => {
        released ??= writer.release();
      },
    );
    expect(wake).toBe('message');
    await released;
    expect(await locks.tryAcquire('rw', { mode: 'write' })).toBeNull();
    expect(await java.readUnlock(name, 1)).toBe(1);
  });

  it('a Redisson fair waiter keeps its place among ours', async () => {
    const name = `${prefix}f`;
    const queued = () => store.raw!.llen(`redisson_lock_queue:{${name}}`);
    const order: string[] = [];
    const ours = (id: string) =>
      locks.detach(() => locks.run('f', () => void order.push(id), { fair: true }));
    const holder = await locks.acquire('f', { fair: true });
    const first = ours('a');
    await until(async () => (await queued()) === 1);
    let waiting!: () => void;
    const subscribed = new Promise<void>((resolve) => (waiting = resolve));
    const theirs = java
      .waitFor(
        java.fairChannel(name, 1),
        () => java.fairTryLock(name, 1, 30_000, 5_000),
        10_000,
        () => waiting(),
      )
      .then(async (wake) => {
        order.push('redisson');
        await java.fairUnlock(name, 1);
        return wake;
      });
    await subscribed; // queued behind a, and listening on its channel
    const last = ours('b');
    await until(async () => (await queued()) === 3);
    await holder.release();
    await Promise.all([first, last]);
    expect(await theirs).toBe('message');
    expect(order).toEqual(['a', 'redisson', 'b']);
    expect(await queued()).toBe(0);
  });
});
