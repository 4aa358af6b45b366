import { LockEngine } from '../../lib/core/lock-engine';
import type { LockEngineConfig } from '../../lib/core/lock-engine-config';
import type { LockHandle } from '../../lib/core/lock-handle';
import {
  LockAcquireTimeoutError,
  LockError,
  LockLostError,
  LockNotHeldError,
  LockRedisError,
} from '../../lib/errors';
import { Deferred, observerOf, testEngine } from './engine-kit';
import { FakeStore } from './fake-store';
import { sleep, until } from '../../tools/time';

const LEASE = 300;
const PREFIX = 'p:';

function engineOn(store: FakeStore, config: Partial<LockEngineConfig> = {}) {
  const logger = { warn: jest.fn((_m: string) => undefined), debug: jest.fn() };
  const onLost = jest.fn((_e: LockLostError) => undefined);
  const engine = testEngine(store, {
    keyPrefix: PREFIX,
    leaseTime: LEASE,
    waitTime: 1_000,
    logger,
    observer: observerOf({ lost: onLost }),
    ...config,
  });
  return { engine, logger, onLost };
}

/** Resolves once `predicate` holds, checking after each turn of the event loop. */
const untilTurn = (predicate: () => boolean) => until(predicate, 5_000, { every: 0 });

describe('LockEngine on a fake store', () => {
  let store: FakeStore;
  let engine: LockEngine;
  let onLost: jest.Mock;
  let logger: { warn: jest.Mock; debug: jest.Mock };

  beforeEach(() => {
    store = new FakeStore();
    ({ engine, onLost, logger } = engineOn(store));
  });
  afterEach(() => engine.close());

  const acquires = () => store.calls.filter((c) => c.method === 'acquire');
  const releases = () => store.calls.filter((c) => c.method === 'release');

  describe('reentrancy', () => {
    it('re-enters in the owning call chain without a store call; the outermost frees it', async () => {
      await engine.run('k', async (outer) => {
        expect(outer.depth).toBe(1);
        expect(store.holder('p:k')).toBeDefined();
        const inner = await engine.acquire('k');
        expect(inner.depth).toBe(2);
        // acquire() does not make the caller run as the inner entry: runAs does.
        expect([engine.current(), engine.holdCount('k')]).toEqual([outer, 1]);
        engine.runAs(inner, () =>
          expect([engine.current('k'), engine.holdCount('k')]).toEqual([inner, 2]),
        );
        await inner.release();
        expect(acquires()).toHaveLength(1);
        expect(releases()).toHaveLength(0);
      });
      expect(releases()).toHaveLength(1);
      expect(store.holder('p:k')).toBeUndefined();
      expect(engine.heldCount).toBe(0);
    });

    it('another call chain of this process does not re-enter: it waits or finds it busy', async () => {
      const held = await engine.acquire('k');
      await expect(engine.detach(() => engine.tryAcquire('k'))).resolves.toBeNull();
      const error = await engine.acquire('k', { waitTime: 50 }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(LockAcquireTimeoutError);
      expect((error as LockAcquireTimeoutError).heldByThisProcess).toBe(true);
      const next = engine.acquire('k', { waitTime: 1_000 });
      await held.release();
      const handle = await next;
      expect(handle.depth).toBe(1);
      await handle.release();
    });

    it('a released handle cannot be released again', async () => {
      const lock = await engine.acquire('k');
      await lock.release();
      await expect(lock.release()).rejects.toBeInstanceOf(LockNotHeldError);
      expect(releases()).toHaveLength(1);
    });
  });

  describe('run() policies', () => {
    const loseInside = (lock: LockHandle) => engine.forceUnlock(lock.key).then(() => 'result');

    it('onLockLost throw (default) rejects with the LockLostError after the function', async () => {
      await expect(engine.run('k', loseInside)).rejects.toBeInstanceOf(LockLostError);
      expect(onLost).toHaveBeenCalledTimes(1);
    });

    it('onLockLost ignore returns the result; a callback gets the error', async () => {
      await expect(engine.run('k', loseInside, { onLockLost: 'ignore' })).resolves.toBe('result');
      const policy = jest.fn();
      await expect(engine.run('k', loseInside, { onLockLost: policy })).resolves.toBe('result');
      expect(policy).toHaveBeenCalledWith(expect.any(LockLostError));
      const fails = () => {
        throw new Error('from the policy');
      };
      await expect(engine.run('k', loseInside, { onLockLost: fails })).rejects.toThrow(
        'from the policy',
      );
    });

    it('a loss found only at release (the key vanished) follows the policy too', async () => {
      const run = engine.run('k', () => store.vanish('p:k'), { onLockLost: 'ignore' });
      await expect(run).resolves.toBeUndefined();
      await expect(engine.run('k', () => store.vanish('p:k'))).rejects.toThrow(
        /expired or been deleted before release/,
      );
      expect(onLost).toHaveBeenCalledTimes(2);
    });

    it('the function’s own error wins over a loss', async () => {
      const fn = async (lock: LockHandle) => {
        await engine.forceUnlock(lock.key);
        throw new Error('own');
      };
      await expect(engine.run('k', fn)).rejects.toThrow('own');
    });

    it('onBusy skip resolves undefined without running the function; default throws', async () => {
      store.take('p:k', 'other:1', 60_000);
      const fn = jest.fn();
      await expect(engine.run('k', fn, { waitTime: 0, onBusy: 'skip' })).resolves.toBeUndefined();
      await expect(engine.run('k', fn, { waitTime: 0 })).rejects.toBeInstanceOf(
        LockAcquireTimeoutError,
      );
      expect(fn).not.toHaveBeenCalled();
      expect(logger.debug).toHaveBeenCalledWith(expect.stringMatching(/Skipped/));
    });
  });

  describe('waiting', () => {
    it('a waiter takes the lock on the release notice of another process', async () => {
      store.take('p:k', 'other:1', 60_000);
      await expect(engine.remainingTtl('k')).resolves.toBeGreaterThan(59_000);
      const waiting = engine.acquire('k', { waitTime: 10_000 });
      await untilTurn(() => store.calls.some((c) => c.method === 'subscribe'));
      await untilTurn(() => acquires().length >= 2); // tried once more once subscribed
      store.freeByOther('p:k');
      const lock = await waiting;
      expect(store.holder('p:k')).toBe(acquires().at(-1)!.owner);
      await lock.release();
      await expect(engine.remainingTtl('k')).resolves.toBeNull();
    });

    it('forceUnlock deletes a lock held here and reports it lost', async () => {
      const lock = await engine.acquire('k');
      await expect(engine.forceUnlock('k')).resolves.toBe(true);
      expect(lock.signal.aborted).toBe(true);
      expect(onLost).toHaveBeenCalledWith(lock.signal.reason);
      await expect(lock.release()).rejects.toBeInstanceOf(LockLostError);
      await expect(engine.forceUnlock('k')).resolves.toBe(false);
    });
  });

  describe('close()', () => {
    it('loses holds still in use after the timeout: signal aborted, run rejects, lock freed', async () => {
      const inside = new Deferred();
      const finish = new Deferred();
      let signal: AbortSignal | undefined;
      const run = engine.run('k', async (lock) => {
        signal = lock.signal;
        inside.resolve();
        await finish.promise;
      });
      await inside.promise;
      await engine.close(100);
      expect(signal?.aborted).toBe(true);
      expect(signal?.reason).toBeInstanceOf(LockLostError);
      expect(store.holder('p:k')).toBeUndefined();
      finish.resolve();
      await expect(run).rejects.toBeInstanceOf(LockLostError);
    });

    it('re-entry works during the grace period; new acquires and waiters are refused', async () => {
      store.take('p:busy', 'other:1', 60_000);
      const waiter = engine.acquire('busy', { waitTime: 10_000 });
      await untilTurn(() => acquires().length === 1);
      let closing: Promise<void> | undefined;
      await engine.run('k', async () => {
        closing = engine.close(5_000);
        await expect(waiter).rejects.toThrow(/shutting down/);
        await expect(engine.detach(() => engine.acquire('other'))).rejects.toBeInstanceOf(
          LockError,
        );
        const inner = await engine.acquire('k');
        expect(inner.depth).toBe(2);
        await inner.release();
      });
      await closing;
      expect(onLost).not.toHaveBeenCalled();
      expect(store.holder('p:k')).toBeUndefined();
    });

    it('waits for an attempt in flight and frees what it was granted', async () => {
      const held = store.hold('acquire');
      const acquiring = engine.acquire('k');
      const call = await held;
      let closed = false;
      const closing = engine.close(0).then(() => (closed = true));
      await sleep(20);
      expect(closed).toBe(false);
      call.go();
      await closing;
      await expect(acquiring).rejects.toThrow(/shutting down/);
      expect(store.holder('p:k')).toBeUndefined();
      expect(releases()).toHaveLength(1);
    });
  });

  describe('attempts without an answer', () => {
    it('a connection error on the first attempt releases what that owner may have taken', async () => {
      store.fault('acquire', 'lose-answer');
      const error = await engine.tryAcquire('k').catch((e: unknown) => e);
      expect(error).toBeInstanceOf(LockRedisError);
      expect((error as LockRedisError).refused).toBe(false);
      await untilTurn(() => releases().length === 1);
      expect(releases()[0].owner).toBe(acquires()[0].owner);
      expect(store.holder('p:k')).toBeUndefined();
      expect(engine.heldCount).toBe(0);
    });

    it('an error Redis refused is passed on; that owner is released (a script that failed midway may have written)', async () => {
      store.fault('acquire', 'refuse');
      await expect(engine.acquire('k')).rejects.toMatchObject({ refused: true });
      await untilTurn(() => releases().length === 1);
      expect(releases()[0].owner).toBe(acquires()[0].owner);
      expect(store.holder('p:k')).toBeUndefined();
    });

    it('an attempt unanswered within its bound rejects with LockRedisError; a late grant is freed', async () => {
      const held = store.hold('acquire');
      const trying = engine.tryAcquire('k');
      const call = await held;
      // The bound of a no-wait attempt is a third of the lease.
      await expect(trying).rejects.toThrow(/no answer within 100 ms/);
      await expect(trying).rejects.toMatchObject({ refused: false });
      call.go();
      // The cleanup release (no answer: nothing taken yet), then the late grant's release.
      await untilTurn(() => releases().length >= 2 && store.holder('p:k') === undefined);
      const owner = acquires()[0].owner;
      expect(releases().every((r) => r.owner === owner)).toBe(true);
      expect(store.holder('p:k')).toBeUndefined();
      expect(engine.heldCount).toBe(0);
    });
  });
});
