import { LockEngine } from '../../lib/core/lock-engine';
import { LockAcquireTimeoutError, LockRedisError, StoreUnreachableError } from '../../lib/errors';
import { testEngine } from './engine-kit';
import { FakeStore } from './fake-store';

// The engine's monotonic clock follows the fake timers.
jest.mock('../../lib/time/clock', () => ({ now: () => Date.now() }));

const LEASE = 30_000;
const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:6379'), {
  code: 'ECONNREFUSED',
});

/** Settles `promise` into its value or error, and says when (fake clock ms). */
function watch<T>(promise: Promise<T>) {
  const seen: { at?: number; outcome?: unknown } = {};
  promise.then(
    (value) => Object.assign(seen, { at: Date.now(), outcome: value }),
    (error: unknown) => Object.assign(seen, { at: Date.now(), outcome: error }),
  );
  return seen;
}

describe('LockEngine on an unreachable store (fake timers)', () => {
  let store: FakeStore;
  let engine: LockEngine;
  let started: number;

  beforeEach(() => {
    jest.useFakeTimers();
    started = Date.now();
    store = new FakeStore();
    engine = testEngine(store, { leaseTime: LEASE });
  });
  afterEach(async () => {
    store.down = undefined;
    jest.useRealTimers(); // close() waits a turn of the event loop
    await engine.close();
  });

  const acquires = () => store.calls.filter((call) => call.method === 'acquire');

  it('tryAcquire fails at once and acquire at the end of its wait, not of a third of the lease, with the cause', async () => {
    store.down = refused;
    const tried = watch(engine.tryAcquire('k'));
    await jest.advanceTimersByTimeAsync(0);
    expect(tried.outcome).toBeInstanceOf(StoreUnreachableError);
    expect(tried.at).toBe(started);

    const waited = watch(engine.acquire('k', { waitTime: 500 }));
    await jest.advanceTimersByTimeAsync(499);
    expect(waited.outcome).toBeUndefined();
    await jest.advanceTimersByTimeAsync(1);
    expect(waited.outcome).toBeInstanceOf(LockRedisError);
    expect((waited.outcome as Error).cause).toBe(refused);
    expect(waited.at! - started).toBe(500);
    // Retried in the queue meanwhile (every 100 ms), each failing unsent: nothing to free.
    expect(acquires().length).toBeGreaterThanOrEqual(5);
    expect(store.holder('p:k')).toBeUndefined();
  });

  it('an acquire that may wait gets the lock once the store is back within its wait', async () => {
    store.down = refused;
    const waited = watch(engine.acquire('k', { waitTime: 2_000 }));
    await jest.advanceTimersByTimeAsync(700);
    store.down = undefined;
    await jest.advanceTimersByTimeAsync(200);
    expect(waited.outcome).toEqual(expect.objectContaining({ key: 'k', depth: 1 }));
    expect(store.holder('p:k')).toBeDefined();
    await (waited.outcome as { release(): Promise<void> }).release();
  });

  it('a waiter parked on a busy lock before the outage ends at its wait with LockRedisError, not busy', async () => {
    store.take('p:k', 'other:1', LEASE);
    const waited = watch(engine.acquire('k', { waitTime: 1_000 }));
    await jest.advanceTimersByTimeAsync(100);
    store.down = refused;
    await jest.advanceTimersByTimeAsync(900);
    expect(waited.outcome).toBeInstanceOf(LockRedisError);
    expect(waited.outcome).not.toBeInstanceOf(LockAcquireTimeoutError);
    expect(waited.at! - started).toBe(1_000);
    expect(acquires().length).toBeGreaterThan(0);
  });
});
