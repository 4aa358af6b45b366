import { LockEngine } from '../../lib/core/lock-engine';
import { ChainHandles } from '../../lib/core/ownership/chain-handles';
import { LockAcquireTimeoutError, LockSelfDeadlockError } from '../../lib/errors';
import { testEngine } from './engine-kit';
import { FakeStore } from './fake-store';

// A call chain that holds a lock through a handle from acquire() and asks for it again (run(),
// @Locked, acquire()) within one scope (a request: RedisLockModule's interceptor opens one per
// handled call; here ChainHandles.inScope) would wait for itself: it fails at once. Contention
// between chains still waits, and its error never points at runAs.
/** Resolves after `count` turns of the event loop. */
async function turns(count: number): Promise<void> {
  for (let i = 0; i < count; i++) await new Promise((resolve) => setImmediate(resolve));
}

describe('LockEngine: a chain waiting for its own acquire() handle', () => {
  let store: FakeStore;
  let engine: LockEngine;

  beforeEach(() => {
    store = new FakeStore();
    // The default wait (10 s): a self-deadlock must not sit through it.
    engine = testEngine(store, { leaseTime: 300 });
  });
  afterEach(() => engine.close());

  it(
    'run() on the key of the chain’s own handle fails at once with LockSelfDeadlockError',
    scoped(async () => {
      jest.useFakeTimers({ doNotFake: ['setImmediate', 'nextTick', 'queueMicrotask'] });
      try {
        const handle = await engine.acquire('k');
        const body = jest.fn();
        const outcome = engine.run('k', body).catch((e: unknown) => e);
        // No timer runs (they are fake): a call that waited would still be pending after this.
        const settled = await Promise.race([outcome, turns(5).then(() => 'still waiting')]);
        expect(settled).toBeInstanceOf(LockSelfDeadlockError);
        expect((settled as Error).message).toMatch(/locks\.runAs\(handle/);
        expect(body).not.toHaveBeenCalled();
        await handle.release();
      } finally {
        jest.useRealTimers();
      }
    }),
  );

  it(
    'also for a second acquire(), a write on a read handle, and a multi-lock member',
    scoped(async () => {
      const plain = await engine.acquire('k');
      await expect(engine.acquire('k')).rejects.toBeInstanceOf(LockSelfDeadlockError);
      await expect(engine.run(['x', 'k'], () => undefined)).rejects.toThrow(
        'this call chain already holds "k"',
      );
      await plain.release();
      const read = await engine.acquire('rw', { mode: 'read' });
      await expect(engine.run('rw', () => undefined, { mode: 'write' })).rejects.toBeInstanceOf(
        LockSelfDeadlockError,
      );
      await read.release();
    }),
  );

  it(
    'a handle released right after the call (return lockedCall() in await using) is waited for, not refused',
    scoped(async () => {
      const returned = async () => {
        await using _handle = await engine.acquire('k');
        return engine.run('k', (lock) => lock.depth); // released as the block ends, before the wait
      };
      await expect(returned()).resolves.toBe(1);
    }),
  );

  it(
    're-enters inside runAs(handle), and takes the key again once the handle is released',
    scoped(async () => {
      const handle = await engine.acquire('k');
      await expect(
        engine.runAs(handle, () => engine.run('k', (inner) => inner.depth)),
      ).resolves.toBe(2);
      await handle.release();
      await expect(engine.run('k', (lock) => lock.depth)).resolves.toBe(1);
    }),
  );

  it(
    'another chain waits as before (detach(), a concurrent caller): a timeout without a runAs hint',
    scoped(async () => {
      const handle = await engine.acquire('k');
      const error = await engine
        .detach(() => engine.run('k', () => undefined, { waitTime: 30 }))
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(LockAcquireTimeoutError);
      expect((error as LockAcquireTimeoutError).heldByThisProcess).toBe(true);
      expect((error as Error).message).not.toMatch(/runAs/);
      const waiter = engine.detach(() => engine.run('k', (lock) => lock.depth));
      await handle.release();
      await expect(waiter).resolves.toBe(1);
    }),
  );

  it('another scope (another request) is not blocked by this one’s handle: it waits', async () => {
    await ChainHandles.inScope(async () => {
      const handle = await engine.acquire('k');
      const other = ChainHandles.inScope(() => engine.run('k', () => 'other', { waitTime: 5_000 }));
      await handle.release();
      await expect(other).resolves.toBe('other');
    });
  });

  it('outside any scope nothing is recorded: a call on the handle’s key waits, and times out', async () => {
    const handle = await engine.acquire('k');
    const error = await engine.run('k', () => undefined, { waitTime: 30 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LockAcquireTimeoutError);
    await handle.release();
  });
});

/** A test body run in a scope of its own, as a request is. */
function scoped(body: () => Promise<void>): () => Promise<void> {
  return () => ChainHandles.inScope(body);
}
