import { LockEngine } from '../../lib/core/lock-engine';
import type { LockEngineConfig } from '../../lib/core/lock-engine-config';
import { LockError, LockLostError, LockOptionsError } from '../../lib/errors';
import type { LockStore } from '../../lib/store';
import { observerOf, testEngine } from './engine-kit';
import { FakeStore } from './fake-store';

// Jest's fake timers fake Date but not the perf_hooks clock: run the engine clock on Date.
jest.mock('../../lib/time/clock', () => ({ now: () => Date.now() }));

const LEASE = 300;
const PERIOD = LEASE / 3;

/** holdAtLeast and maxHold in the engine, on a fake store, with fake timers. */
describe('holdAtLeast and maxHold in the engine', () => {
  let store: FakeStore;
  let engine: LockEngine;
  let lost: LockLostError[];
  let released: number[];
  let warn: jest.Mock;

  function engineOn(on: LockStore, config: Partial<LockEngineConfig> = {}): LockEngine {
    return testEngine(on, {
      leaseTime: LEASE,
      waitTime: 1_000,
      onLockLost: 'ignore',
      logger: { warn, debug: () => undefined },
      observer: observerOf({
        released: (_key, holdMs) => void released.push(holdMs),
        lost: (error) => void lost.push(error),
      }),
      ...config,
    });
  }

  beforeEach(() => {
    jest.useFakeTimers({ now: 1_000_000, doNotFake: ['setImmediate'] });
    store = new FakeStore();
    lost = [];
    released = [];
    warn = jest.fn();
    engine = engineOn(store);
  });
  afterEach(async () => {
    jest.useRealTimers();
    await engine.close(0);
  });

  const called = (method: string) => store.calls.filter((call) => call.method === method);

  it('keeps a lock released early held, unrenewed, until holdAtLeast from its grant: one call, no release', async () => {
    await engine.run('job', () => jest.advanceTimersByTimeAsync(40), { holdAtLeast: 1_000 });
    expect(called('release')).toEqual([]);
    const kept = called('releaseKept');
    expect(kept).toHaveLength(1);
    expect(store.holder('p:job')).toBe(kept[0].owner);
    expect(engine.heldCount).toBe(0); // no longer renewed by the watchdog
    const renewals = called('renew').length;
    await jest.advanceTimersByTimeAsync(1_000 - 40 - 1);
    expect(store.holder('p:job')).toBe(kept[0].owner);
    expect(await engine.tryAcquire('job')).toBeNull();
    await jest.advanceTimersByTimeAsync(1);
    expect(store.holder('p:job')).toBeUndefined(); // expired at the end of the period
    expect(called('renew')).toHaveLength(renewals);
    expect(lost).toEqual([]); // the expiry is not a loss
    expect(released).toEqual([1_000]); // busy for others that long: what retryAfter counts
  });

  it('releases as usual once holdAtLeast has passed, and keeps only at the outermost release', async () => {
    await engine.run(
      'job',
      async () => {
        await engine.run('job', () => undefined, { holdAtLeast: 1_000 }); // re-entry: no store call
        expect(called('releaseKept')).toEqual([]);
        await jest.advanceTimersByTimeAsync(200);
      },
      { holdAtLeast: 100 },
    );
    expect(called('releaseKept')).toEqual([]);
    expect(called('release')).toHaveLength(1);
    expect(store.holder('p:job')).toBeUndefined();
  });

  it('applies to a handle of acquire() too, whose second release is refused as usual', async () => {
    const handle = await engine.acquire('job', { holdAtLeast: 500 });
    await handle.release();
    await expect(handle.release()).rejects.toThrow('already released');
    expect(called('releaseKept')).toHaveLength(1);
    expect(store.holder('p:job')).toBeDefined();
  });

  it('reports a lock found gone by the kept release as lost, and touches nothing', async () => {
    const handle = await engine.acquire('job', { holdAtLeast: 500 });
    store.vanish('p:job');
    await expect(handle.release()).rejects.toBeInstanceOf(LockLostError);
    expect(lost).toHaveLength(1);
    expect(store.holder('p:job')).toBeUndefined();
  });

  it('resolves a kept release whose store call failed, with a warning (the lease ends it)', async () => {
    const handle = await engine.acquire('job', { holdAtLeast: 500 });
    store.fault('releaseKept', 'refuse');
    await expect(handle.release()).resolves.toBeUndefined();
    expect(warn.mock.calls[0][0]).toMatch(/kept for holdAtLeast\) failed .*NOPERM/);
  });

  it('refuses holdAtLeast on a multi-lock and on a store without the port, before acquiring', async () => {
    await expect(engine.run(['a', 'b'], () => 1, { holdAtLeast: 100 })).rejects.toThrow(
      LockOptionsError,
    );
    const bare = Object.assign(Object.create(store) as FakeStore, { releaseKept: undefined });
    const other = engineOn(bare);
    try {
      await expect(other.acquire('job', { holdAtLeast: 100 })).rejects.toThrow(
        new LockError('This lock store does not support holdAtLeast (no keptRelease port).'),
      );
    } finally {
      await other.close(0);
    }
    expect(called('acquire')).toEqual([]);
  });

  it('stops renewing a hold older than maxHold; when its lease runs out the holder is told, naming maxHold', async () => {
    const handle = await engine.acquire('job', { maxHold: 250 });
    const at = Date.now();
    await jest.advanceTimersByTimeAsync(3 * PERIOD); // renewed at 100 and 200 ms, not at 300
    expect(called('renew')).toHaveLength(2);
    expect(handle.signal.aborted).toBe(false);
    await jest.advanceTimersByTimeAsync(200 + LEASE - 3 * PERIOD - 1);
    expect(handle.signal.aborted).toBe(false);
    await jest.advanceTimersByTimeAsync(1);
    await new Promise((resolve) => setImmediate(resolve));
    expect(Date.now() - at).toBe(200 + LEASE); // its last renewal's lease
    expect(handle.signal.aborted).toBe(true);
    expect(lost).toHaveLength(1);
    expect(lost[0].message).toMatch(/held longer than its maxHold \(250 ms\)/);
    expect(called('renew')).toHaveLength(2);
    await expect(handle.release()).rejects.toBe(lost[0]);
  });

  it('takes the engine-wide maxHold as the default, and a call may lift it', async () => {
    await engine.close(0);
    engine = engineOn(store, { maxHold: 150 });
    const capped = await engine.acquire('a');
    const free = await engine.acquire('b', { maxHold: Infinity });
    await jest.advanceTimersByTimeAsync(150 + LEASE);
    await new Promise((resolve) => setImmediate(resolve));
    expect(capped.signal.aborted).toBe(true);
    expect(free.signal.aborted).toBe(false);
    await free.release();
  });
});
