import { LockError, LockLostError, type LockHandle } from '../../lib';
import {
  fastRedis,
  lockNode,
  logged,
  settled,
  twoLockNodes,
  type LockNode,
} from '../faults/fault-kit';
import { abortedAt, channelOf, delayProxy, monotonic, subscribers } from '../faults/timing-kit';
import { sleep, until } from '../../tools/time';

/** Long enough that a lock left behind by shutdown would still be there when a test looks. */
const LONG_LEASE = 30_000;

describe('app.close() while locked work runs, waits or re-enters (its own redis-server)', () => {
  let other: LockNode;
  const nodes = twoLockNodes({}, (made) => (other = made.b));

  it('a hold released by shutdown while its work runs is lost: signal aborted, run() rejects, logged; nobody else enters before', async () => {
    // issue 8, defect 1
    const closing = await lockNode(fastRedis(nodes.redis.port), {
      keyPrefix: other.prefix,
      shutdownTimeout: 500,
    });
    let lock: LockHandle | undefined;
    let abortTime = () => -1;
    const running = settled(
      closing.locks.run('shutdown:run', async (held) => {
        lock = held;
        abortTime = abortedAt(held.signal);
        await sleep(1_500); // work that does not watch its signal
        return 'finished';
      }),
    );
    await until(() => lock !== undefined, 1_000);
    let enteredAt = -1;
    const second = other.locks.run('shutdown:run', () => void (enteredAt = monotonic()), {
      waitTime: 5_000,
    });
    const logStart = logged.length;
    await closing.close();
    const outcome = await running;
    await second;
    const lines = logged.slice(logStart).map((l) => l.message);
    expect({
      signalAbortedWithLockLostError: lock!.signal.reason instanceof LockLostError,
      runRejectedWithLockLostError: outcome instanceof LockLostError,
      loggedAsReleasedByShutdown: lines.some(
        (line) =>
          line.includes('"shutdown:run"') && /shut/i.test(line) && !/will expire/.test(line),
      ),
      secondOwnerEnteredAfterTheAbort: abortTime() >= 0 && enteredAt >= abortTime(),
    }).toEqual({
      signalAbortedWithLockLostError: true,
      runRejectedWithLockLostError: true,
      loggedAsReleasedByShutdown: true,
      secondOwnerEnteredAfterTheAbort: true,
    });
  });

  it('re-entry of a held lock works during the shutdown grace period, until that hold ends', async () => {
    // issue 8, defect 3
    const closing = await lockNode(fastRedis(nodes.redis.port), {
      keyPrefix: other.prefix,
      shutdownTimeout: 5_000,
    });
    const blocker = await other.locks.acquire('grace:blocker');
    // A waiter of the closing app: rejected as soon as close() has begun.
    const shutdownBegan = settled(closing.locks.acquire('grace:blocker', { waitTime: 10_000 }));
    let entered = false;
    const inside = closing.locks.run('grace', async () => {
      entered = true;
      await shutdownBegan;
      const nested = await settled(closing.locks.run('grace', () => 'nested run'));
      const handle = await settled(closing.locks.acquire('grace'));
      const depth = handle instanceof Error ? handle : (handle as LockHandle).depth;
      if (!(handle instanceof Error)) await (handle as LockHandle).release();
      return { nested, depth };
    });
    try {
      await until(() => entered, 1_000);
      const closed = closing.close();
      expect(await shutdownBegan).toBeInstanceOf(LockError);
      await expect(inside).resolves.toEqual({ nested: 'nested run', depth: 2 });
      await closed;
      expect(await nodes.raw.exists(`${other.prefix}grace`)).toBe(0);
    } finally {
      await blocker.release();
      await closing.close();
    }
  });

  it('close() during a waiter’s in-flight attempt (100 ms reply latency) leaves no lock in Redis once it resolves', async () => {
    // issue 8, defect 4
    const proxy = await delayProxy(nodes.redis.port, 100);
    const slow = await lockNode(fastRedis(proxy.port), {
      keyPrefix: other.prefix,
      leaseTime: LONG_LEASE,
    });
    try {
      const name = `${other.prefix}inflight`;
      await (await slow.locks.acquire('inflight:warm')).release(); // connected, scripts loaded
      const held = await other.locks.acquire('inflight');
      const waiting = settled(slow.locks.acquire('inflight', { waitTime: 10_000 }));
      await until(async () => (await subscribers(nodes.raw, channelOf(name))) === 1, 2_000);
      await sleep(250); // its attempt after subscribing has been answered: busy
      await held.release(); // the waiter is told 100 ms later and tries again
      await until(async () => (await nodes.raw.exists(name)) === 1, 2_000); // Redis granted the waiter
      await slow.close(); // its answer is still 100 ms away
      const leftBehind = await nodes.raw.exists(name);
      expect(await waiting).toBeInstanceOf(LockError);
      expect(leftBehind).toBe(0);
    } finally {
      await slow.close();
      await proxy.close();
    }
  });
});
