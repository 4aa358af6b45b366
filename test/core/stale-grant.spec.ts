import { LockEngine } from '../../lib/core/lock-engine';
import type { LockHandle } from '../../lib/core/lock-handle';
import { LockLostError } from '../../lib/errors';
import { observerOf, testEngine } from './engine-kit';
import { FakeStore } from './fake-store';

// Jest's fake timers fake Date but not the perf_hooks clock: run the engine clock on Date, so
// jest.setSystemTime() moves it on without firing a timer, as a stalled event loop does.
jest.mock('../../lib/time/clock', () => ({ now: () => Date.now() }));

const LEASE = 300;
/** A grant is handed over while two thirds of its lease are left to run. */
const HAND_OVER_BY = LEASE - LEASE / 3;

/** Moves the clock on by `ms` with no timer firing: the event loop was stalled that long. */
const stall = (ms: number) => jest.setSystemTime(Date.now() + ms);

describe('a grant read late, and a hold whose lease deadline passed during a stall', () => {
  let store: FakeStore;
  let engine: LockEngine;
  let onLost: jest.Mock;

  beforeEach(() => {
    // Notices and the watchdog's verdicts run on real immediates (fake ones run a ms late).
    jest.useFakeTimers({ now: 1_000_000, doNotFake: ['setImmediate'] });
    store = new FakeStore();
    onLost = jest.fn();
    engine = testEngine(store, {
      leaseTime: LEASE,
      waitTime: 1_000,
      onLockLost: 'ignore',
      observer: observerOf({ lost: onLost }),
    });
  });
  afterEach(async () => {
    jest.useRealTimers();
    await engine.close(0);
  });

  const acquires = () => store.calls.filter((call) => call.method === 'acquire');
  const releases = () => store.calls.filter((call) => call.method === 'release');

  /** Starts `acquiring`, then lets the store answer it once the loop was stalled `ms`. */
  async function answeredAfter<T>(ms: number, acquiring: () => Promise<T>): Promise<T> {
    const held = store.hold('acquire');
    const result = acquiring();
    const call = await held;
    stall(ms);
    call.go();
    return result;
  }

  it.each([
    ['past its lease', LEASE + 50],
    ['in the last third of its lease', HAND_OVER_BY],
  ])('a grant read %s is freed, and a no-wait try reports busy', async (_when, late) => {
    const handle = await answeredAfter(late, () => engine.tryAcquire('k'));
    expect(handle).toBeNull();
    const [first] = acquires();
    expect(releases().map((call) => call.owner)).toEqual([first.owner]);
    expect(store.holder('p:k')).toBeUndefined();
    expect(engine.heldCount).toBe(0);
  });

  it('a grant read past its lease is freed; the caller waits on and gets a fresh one', async () => {
    const handle = await answeredAfter<LockHandle>(LEASE + 50, () =>
      engine.acquire('k', { waitTime: 1_000 }),
    );
    const [first, second] = acquires();
    expect(releases().map((call) => call.owner)).toEqual([first.owner]);
    expect(store.holder('p:k')).toBe(second.owner);
    expect(handle.signal.aborted).toBe(false);
    await handle.release();
  });

  it('a grant read just before the last third of its lease is handed over', async () => {
    const handle = await answeredAfter(HAND_OVER_BY - 1, () => engine.tryAcquire('k'));
    expect(handle).not.toBeNull();
    expect(handle!.signal.aborted).toBe(false);
    await handle!.release();
  });

  describe('the first read after the lease deadline passed unrenewed finds the signal aborted', () => {
    it.each([
      ['a watchdog-renewed lock', {}],
      ['a lock with an explicit lease', { leaseTime: LEASE }],
    ])('%s: a signal taken before the stall, and the handle', async (_what, options) => {
      const handle = await engine.acquire('k', options);
      const signal = handle.signal;
      expect(signal.aborted).toBe(false);
      stall(LEASE);
      // No timer has fired: the read itself finds the deadline passed.
      expect(signal.aborted).toBe(true);
      expect(signal.reason).toBeInstanceOf(LockLostError);
      expect(() => signal.throwIfAborted()).toThrow(LockLostError);
      expect(handle.signal.aborted).toBe(true);
      expect(onLost).toHaveBeenCalledTimes(1);
      await expect(handle.release()).rejects.toBeInstanceOf(LockLostError);
    });

    it('a signal first read after the stall', async () => {
      const handle = await engine.acquire('k');
      stall(LEASE);
      expect(handle.signal.aborted).toBe(true);
      expect(onLost).toHaveBeenCalledTimes(1);
      await handle.release().catch(() => undefined);
    });

    it('a multi-lock', async () => {
      const handle = await engine.acquire(['a', 'b']);
      const signal = handle.signal;
      stall(LEASE);
      expect(signal.aborted).toBe(true);
      expect(signal.reason).toBeInstanceOf(LockLostError);
      await handle.release().catch(() => undefined);
    });

    it('re-entering it throws the loss', async () => {
      await expect(
        engine.run('k', async () => {
          stall(LEASE);
          await engine.acquire('k');
        }),
      ).rejects.toBeInstanceOf(LockLostError);
    });

    it('a renewal confirmed in time keeps it', async () => {
      const handle = await engine.acquire('k');
      // The watchdog renews every third of the lease; each renewal is answered at once.
      for (let i = 0; i < 6; i++) await jest.advanceTimersByTimeAsync(LEASE / 3);
      expect(handle.signal.aborted).toBe(false);
      expect(onLost).not.toHaveBeenCalled();
      await handle.release();
    });
  });
});
