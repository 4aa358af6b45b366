import type { Redis } from 'ioredis';
import { LockAcquireTimeoutError, LockRedisError } from '../../lib';
import { fastRedis, proxiedRedis, type LockNode, type TcpProxy } from './fault-kit';
import { sleep, until } from '../../tools/time';

/** The place timeout of these nodes, ms: long, so that a stale place shows. */
const PLACE = 3_000;
/** The nodes' lease: the holder keeps the lock through the test on a loaded machine too. */
const OPTIONS = { fairQueueTimeout: PLACE, leaseTime: 5_000 };

describe('fault: fair waiters that give up while the connection is cut (its own redis-server)', () => {
  let raw: Redis;
  let proxy: TcpProxy;
  let direct: LockNode;
  let viaProxy: LockNode;
  proxiedRedis(OPTIONS, async (suite) => {
    ({ raw, proxy, direct } = suite);
    viaProxy = await suite.node(fastRedis(proxy.port), { ...OPTIONS, keyPrefix: direct.prefix });
  });

  // Found by the family checker on a Cluster failover: waiters whose wait ended during the
  // outage could not leave the queue, and each stale place kept the free lock from the live
  // waiters behind it for up to the place timeout, one after the other.
  it('leave the queue once the connection is back: the next waiter gets the freed lock at once', async () => {
    const queue = `redisson_lock_queue:{${direct.prefix}q}`;
    const held = await direct.locks.acquire('q', { fair: true });
    const gaveUp = [1, 2].map(() =>
      viaProxy.locks.acquire('q', { fair: true, waitTime: 600 }).catch((error: unknown) => error),
    );
    await until(async () => (await raw.llen(queue)) === 2, 2_000);
    proxy.cut();
    // Each wait ends: timed out, or failed on the cut connection.
    for (const outcome of await Promise.all(gaveUp)) {
      const gave = outcome instanceof LockAcquireTimeoutError || outcome instanceof LockRedisError;
      expect(gave ? 'gave up' : outcome).toBe('gave up');
    }
    await sleep(2_000); // longer than ioredis keeps an unsent command: the leaves failed
    expect(await raw.llen(queue)).toBe(2);
    proxy.restore();
    await until(async () => (await raw.llen(queue)) === 0, 2_500);
    await held.release();
    const next = await direct.locks.acquire('q', { fair: true, waitTime: PLACE / 2 });
    await next.release();
  });
});
