import { LockLostError, type LockHandle } from '../../lib';
import type { TestRedis } from '../support/redis-server';
import {
  LEASE,
  LOSS_BOUND,
  abortTime,
  lossLogLines,
  type LockNode,
  twoLockNodes,
} from './fault-kit';
import { sleep, until } from '../../tools/time';

describe('fault: Redis restarted without persistence (its own redis-server)', () => {
  let redis: TestRedis;
  let a: LockNode;
  let b: LockNode;

  twoLockNodes({ fencing: true }, (nodes) => ({ redis, a, b } = nodes));

  /** Kills and restarts Redis (its data is gone); returns when it answers again. */
  async function restart(): Promise<{ killedAt: number; backAt: number }> {
    await redis.kill();
    const killedAt = Date.now();
    await redis.restart();
    return { killedAt, backAt: Date.now() };
  }

  it('a held lock: loss signalled within a lease (signal, lockLost$, one log line), waiter not stuck, service within 1 s', async () => {
    const held = await a.locks.acquire('restart');
    const waiter = b.locks.acquire('restart', { waitTime: 10_000 });
    await sleep(50);
    // Watched from before the kill: the loss usually comes with a's reconnect, before the probe.
    const abortedAt = abortTime(held.signal, 0);
    const { killedAt, backAt } = await restart();

    const probe = await a.locks.acquire('restart:probe', { waitTime: 1_000 });
    await probe.release();
    expect(Date.now() - backAt).toBeLessThan(1_000);

    // The lock is gone with the data: the waiter gets it (the documented non-guarantee) ...
    const next = await waiter;
    expect(Date.now() - backAt).toBeLessThan(1_000);
    // ... and the former holder is told, within a lease of the restart.
    await until(() => held.signal.aborted, LOSS_BOUND * 2);
    expect(abortedAt() - killedAt).toBeLessThan(LOSS_BOUND);
    expect(held.signal.reason).toBeInstanceOf(LockLostError);
    expect((held.signal.reason as LockLostError).key).toBe('restart');
    await expect(held.release()).rejects.toBeInstanceOf(LockLostError);
    expect(a.lost.map((e) => e.key)).toEqual(['restart']);
    expect(lossLogLines('restart')).toBe(1);
    expect(next.signal.aborted).toBe(false);
    await next.release();
    expect(await a.locks.isLocked('restart')).toBe(false);
  });

  it('run(): the lost call rejects with LockLostError after its function settled; ignore and callback policies apply', async () => {
    const seen: LockLostError[] = [];
    let finished = 0;
    const work = async (lock: LockHandle) => {
      await until(() => lock.signal.aborted, 5_000);
      finished++;
      return 'done';
    };
    const thrown = a.locks.run('run:throw', work).catch((e: unknown) => e);
    const ignored = a.locks.run('run:ignore', work, { onLockLost: 'ignore' });
    const called = a.locks.run('run:callback', work, { onLockLost: (e) => seen.push(e) });
    await sleep(50);
    await restart();
    expect(await thrown).toBeInstanceOf(LockLostError);
    await expect(ignored).resolves.toBe('done');
    await expect(called).resolves.toBe('done');
    expect(finished).toBe(3);
    expect(seen.map((e) => e.key)).toEqual(['run:callback']);
    expect(a.lost.map((e) => e.key).sort()).toEqual(
      expect.arrayContaining(['run:callback', 'run:ignore', 'run:throw']),
    );
  });

  it('Redis down (not yet restarted) for several leases: the holder is told within one lease', async () => {
    const held = await a.locks.acquire('down');
    await redis.kill();
    const lostAfter = abortTime(held.signal, Date.now());
    try {
      await sleep(LOSS_BOUND);
      expect(lostAfter()).toBeGreaterThanOrEqual(0);
      expect(lostAfter()).toBeLessThan(LOSS_BOUND);
    } finally {
      await sleep(LEASE * 2);
      await redis.restart();
    }
    await until(() => held.signal.aborted, 5_000);
    await held.release().catch(() => undefined);
    const probe = await a.locks.acquire('down', { waitTime: 1_000 });
    await probe.release();
  });

  it('fencing tokens keep growing across a restart without persistence (else fencing cannot reject the stale owner)', async () => {
    for (let i = 0; i < 3; i++) await (await a.locks.acquire('fence')).release();
    const first = await a.locks.acquire('fence');
    const stale = first.fencingToken!;
    await restart();
    await until(() => first.signal.aborted, LOSS_BOUND * 2);
    const next = await b.locks.acquire('fence', { waitTime: 1_000 });
    try {
      // A plain INCR on the counter the restart wiped would start again at 1.
      expect(next.fencingToken).toBeGreaterThan(stale);
    } finally {
      await next.release();
      await first.release().catch(() => undefined);
    }
  });
});
