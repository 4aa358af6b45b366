import type { LockHandle } from '../../../lib';
import { fastRedis, lockNode, settled, twoLockNodes, type LockNode } from '../../faults/fault-kit';
import {
  channelOf,
  delayProxy,
  monotonic,
  refTimers,
  steadyRefTimers,
  subscribers,
} from '../../faults/timing-kit';
import { sleep, until } from '../../../tools/time';

/**
 * A long lease: a waiter that missed a release message would wait for the holder's TTL (30 s);
 * one woken by the message gets the lock within a second.
 */
const LONG_LEASE = 30_000;

describe('waiters right after boot, and the timers waiting leaves (its own redis-server)', () => {
  let holder: LockNode;
  const nodes = twoLockNodes({ leaseTime: LONG_LEASE }, (made) => (holder = made.a));

  /**
   * Both connections up and idle, so that the baseline counts no connect or disconnect timer
   * (these tests run first: an earlier test's closed connections leave ioredis timers behind).
   */
  async function warmUp() {
    const held = await holder.locks.acquire('timers:warm');
    const waiting = holder.locks.acquire('timers:warm', { waitTime: 5_000 });
    await sleep(20);
    await held.release();
    await (await waiting).release();
    await sleep(20);
  }

  it('a held lock with another acquire waiting keeps no extra ref’d timer alive', async () => {
    // issue 8, defect 19
    const name = `${holder.prefix}timers`;
    await warmUp();
    const baseline = refTimers();
    const held = await holder.locks.acquire('timers');
    const waiting = settled(holder.locks.acquire('timers', { waitTime: 10_000 }));
    await until(async () => (await subscribers(nodes.raw, channelOf(name))) === 1, 2_000);
    await sleep(10); // the waiter's attempt after subscribing has been answered
    const whileWaiting = await steadyRefTimers();
    await held.release();
    await ((await waiting) as LockHandle).release();
    // A timer of the waiter's lives through the whole wait and is gone after it; one that an
    // earlier suite's client started meanwhile is still there after.
    await sleep(20);
    expect(whileWaiting).toBeLessThanOrEqual(Math.max(baseline, refTimers()));
  });

  it('a sibling waiting for the nested slot of a held lock keeps no extra ref’d timer alive', async () => {
    // issue 8, defect 19
    await warmUp();
    const baseline = refTimers();
    let whileWaiting = -1;
    await holder.locks.run('timers:nested', async () => {
      let release = () => undefined as void;
      const first = holder.locks.run(
        'timers:nested',
        () => new Promise<void>((r) => (release = r)),
      );
      const second = holder.locks.run('timers:nested', () => 'second', { waitTime: 10_000 });
      await sleep(10);
      whileWaiting = await steadyRefTimers();
      release();
      await first;
      expect(await second).toBe('second');
    });
    await sleep(20);
    expect(whileWaiting).toBeLessThanOrEqual(Math.max(baseline, refTimers()));
  });

  it('cold start: 8 waiters on 8 busy keys right after boot (50 ms reply latency) each get their lock within 1 s of its release', async () => {
    // issue 8, defect 5
    const keys = Array.from({ length: 8 }, (_, i) => `cold:${i}`);
    const held = await Promise.all(keys.map((key) => holder.locks.acquire(key)));
    const proxy = await delayProxy(nodes.redis.port, 50);
    const fresh = await lockNode(fastRedis(proxy.port), {
      keyPrefix: holder.prefix,
      leaseTime: LONG_LEASE,
    });
    try {
      await fresh.locks.isLocked('cold:warm'); // the command connection is up; pub/sub is not
      // Waiters arriving 5 ms apart: their SUBSCRIBEs meet the pub/sub connection's handshake.
      const gotAt: number[] = [];
      const waiting: Promise<unknown>[] = [];
      for (const [i, key] of keys.entries()) {
        const run = fresh.locks.run(key, () => void (gotAt[i] = monotonic()), { waitTime: 2_000 });
        waiting.push(settled(run));
        await sleep(5);
      }
      await sleep(400); // every waiter has subscribed (or believes so) and found its lock busy
      const releasedAt = monotonic();
      await Promise.all(held.map((lock) => lock.release()));
      const outcomes = await Promise.all(waiting);
      const late = keys.filter((_, i) => !(gotAt[i] - releasedAt < 1_000));
      expect({ late, timedOut: outcomes.filter((o) => o instanceof Error).length }).toEqual({
        late: [],
        timedOut: 0,
      });
    } finally {
      await Promise.all(held.map((lock) => lock.release().catch(() => undefined)));
      await fresh.close();
      await proxy.close();
    }
  });
});
