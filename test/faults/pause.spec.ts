import { LockAcquireTimeoutError, LockError, LockLostError } from '../../lib';
import type { TestRedis } from '../support/redis-server';
import {
  fastRedis,
  lockNode,
  LEASE,
  LOSS_BOUND,
  lossAfter,
  lossLogLines,
  settled,
  type LockNode,
  twoLockNodes,
} from './fault-kit';
import { sleep, until } from '../../tools/time';
/** How long each test keeps Redis stopped: well past the lease. */
const PAUSE = LEASE * 3;

describe('fault: Redis paused (SIGSTOP) longer than the lease, then resumed (its own redis-server)', () => {
  let redis: TestRedis;
  let a: LockNode;
  let b: LockNode;

  twoLockNodes({}, (nodes) => ({ redis, a, b } = nodes));

  it('after resume: the holder is told (once), a waiter gets the lock, others can acquire, service within 1 s', async () => {
    const held = await a.locks.acquire('paused');
    const waiter = b.locks.acquire('paused', { waitTime: 10_000 });
    await sleep(50);
    redis.pause();
    await sleep(PAUSE);
    redis.resume();
    const resumedAt = Date.now();
    await until(() => held.signal.aborted, LOSS_BOUND);
    expect(held.signal.reason).toBeInstanceOf(LockLostError);
    // Redis measured the lease by its own clock, which ran on while it was stopped: expired.
    const next = await waiter;
    expect(Date.now() - resumedAt).toBeLessThan(1_000);
    await expect(held.release()).rejects.toBeInstanceOf(LockLostError);
    expect(a.lost.map((e) => e.key)).toEqual(['paused']);
    expect(lossLogLines('paused')).toBe(1);
    await next.release();
    const again = await a.locks.acquire('paused', { waitTime: 1_000 });
    await again.release();
    expect(Date.now() - resumedAt).toBeLessThan(1_000);
  });

  it('waiters whose wait ends during the pause are not stuck: they time out on time', async () => {
    const held = await a.locks.acquire('paused:wait');
    const waiting = settled(b.locks.acquire('paused:wait', { waitTime: LEASE }));
    await sleep(50);
    redis.pause();
    const started = Date.now();
    const error = await Promise.race([waiting, sleep(PAUSE).then(() => 'still waiting')]);
    expect(error).toBeInstanceOf(LockAcquireTimeoutError);
    expect(Date.now() - started).toBeLessThan(PAUSE);
    redis.resume();
    await held.release().catch(() => undefined);
  });

  it('during the pause the holder is told within one lease (its hold was not confirmed for a whole lease)', async () => {
    const held = await a.locks.acquire('paused:during');
    const measured = await lossAfter(held, () => redis.pause());
    redis.resume();
    await held.release().catch(() => undefined);
    expect(measured).toBeGreaterThanOrEqual(0);
    expect(measured).toBeLessThan(LOSS_BOUND);
  });

  it('an acquire sent to the paused Redis settles within its waitTime (no hang)', async () => {
    redis.pause();
    const started = Date.now();
    const outcome = settled(a.locks.acquire('paused:acquire', { waitTime: 300 }));
    const first = await Promise.race([outcome, sleep(PAUSE).then(() => 'still pending')]);
    const elapsed = Date.now() - started;
    redis.resume();
    const late = await outcome;
    if (late && typeof late === 'object' && 'release' in late) {
      await (late as { release(): Promise<void> }).release();
    }
    expect(first).toBeInstanceOf(LockError);
    expect(elapsed).toBeLessThan(300 + 1_000);
  });

  it('app.close() while Redis is paused finishes within shutdownTimeout plus a margin', async () => {
    const node = await lockNode(fastRedis(redis.port), { shutdownTimeout: 200 });
    const held = await node.locks.acquire('paused:close');
    redis.pause();
    const started = Date.now();
    const closing = node.close();
    const first = await Promise.race([
      closing.then(() => 'closed'),
      sleep(PAUSE).then(() => 'hung'),
    ]);
    const elapsed = Date.now() - started;
    redis.resume();
    await closing;
    await held.release().catch(() => undefined);
    expect(first).toBe('closed');
    expect(elapsed).toBeLessThan(200 + 1_000);
  });
});
