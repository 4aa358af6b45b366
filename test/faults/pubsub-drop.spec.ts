import type { Redis } from 'ioredis';
import { twoLockNodes, type LockNode } from './fault-kit';
import { sleep, until } from '../../tools/time';

/**
 * A long lease, so that a waiter that missed the release message would wait for ~the holder's
 * TTL (30 s): getting the lock within a second proves it did not depend on that fallback.
 */
const LONG_LEASE = 30_000;

describe('fault: the pub/sub connection dropped while waiters wait (its own redis-server)', () => {
  let raw: Redis;
  let holder: LockNode;
  let waiters: LockNode;

  twoLockNodes({ leaseTime: LONG_LEASE }, (nodes) => ({ raw, a: holder, b: waiters } = nodes));

  const killPubSub = async () => Number(await raw.call('CLIENT', 'KILL', 'TYPE', 'pubsub'));

  it('released while the subscriber is reconnecting: every waiter still gets the lock, within a second', async () => {
    const held = await holder.locks.acquire('pubsub');
    const order: number[] = [];
    const waiting = [1, 2, 3].map((n) =>
      waiters.locks.run('pubsub', () => void order.push(n), { waitTime: 10_000 }),
    );
    // The waiters subscribed (after their first attempt was refused).
    await until(async () => (await raw.pubsub('CHANNELS', '*pubsub}')).length > 0, 2_000);
    expect(await killPubSub()).toBeGreaterThan(0);
    await held.release(); // its release message is published to nobody
    const releasedAt = Date.now();
    await Promise.all(waiting);
    expect(Date.now() - releasedAt).toBeLessThan(1_000);
    expect(order).toEqual([1, 2, 3]);
  });

  it('dropped several times during a wait: the waiter is woken by a later release message', async () => {
    const held = await holder.locks.acquire('pubsub:again');
    const waiting = waiters.locks.run('pubsub:again', () => 'got it', { waitTime: 10_000 });
    for (let i = 0; i < 3; i++) {
      await sleep(150);
      await killPubSub();
    }
    await sleep(300); // resubscribed by now
    const releasedAt = Date.now();
    await held.release();
    await expect(waiting).resolves.toBe('got it');
    expect(Date.now() - releasedAt).toBeLessThan(1_000);
  });
});
