import type { LockService } from '../../lib';
import { lockApp, lockAppEach } from '../support/lock-app';
import { STORE_KINDS, suiteStore, type SuiteStore } from '../support/suite-store';
import { until } from '../../tools/time';

/**
 * Resolves once the first caller started after `before` (a command count) waits in its local
 * queue: it was refused once and its queue has subscribed (or attempted again).
 */
async function queued(store: SuiteStore, before: number): Promise<void> {
  await until(async () => (await store.commandCount()) >= before + 2);
}

/**
 * Resolves once a caller for a lock that has a local queue has joined it: it sends nothing
 * first, and joins within the promise steps before the next turn of the event loop.
 */
const joined = () => new Promise<void>((resolve) => setImmediate(resolve));

// When the turn passes from a waiter to the next without a release notice: after a shared grant
// (a permit, a read hold) and when the head leaves without its turn.
describe.each(STORE_KINDS)('waiters passing the turn on (%s store)', (kind) => {
  const store = suiteStore(kind);
  let locks: LockService;
  let prefix: string;

  // Leases far beyond every wait: a waiter that only retries after a lease never gets in. No
  // client registry: the command counts see lock commands only.
  lockAppEach(
    store,
    { leaseTime: 30_000, waitTime: 6_000, clientRegistry: false },
    (made) => ({ locks, prefix } = made),
  );

  it('the waiter behind one granted the last permit waits for the earliest held permit’s expiry, not the new lease', async () => {
    const semaphore = locks.semaphore('last', { permits: 2 });
    const expiring = await semaphore.acquire({ leaseTime: 1_500 });
    const held = await semaphore.acquire();
    const before = await store.commandCount();
    const first = semaphore.acquire();
    await queued(store, before);
    const second = semaphore.acquire();
    await joined();
    await held.release(); // its notice wakes the first waiter, which takes the last permit
    const taken = await first;
    // The second waiter gets the permit that expires at 1.5 s, well within its 6 s wait.
    const next = await second;
    expect(expiring.signal.aborted).toBe(true);
    await next.release();
    await taken.release();
  });

  it('a reader queued behind a writer of its own process gets in once the writer’s wait runs out', async () => {
    const other = await lockApp(store.target, { keyPrefix: prefix, leaseTime: 30_000 });
    try {
      const reading = await other.locks.acquire('rw', { mode: 'read' });
      const before = await store.commandCount();
      const writer = locks.acquire('rw', { mode: 'write', waitTime: 1_000 });
      await queued(store, before);
      const reader = locks.acquire('rw', { mode: 'read' });
      await joined();
      await expect(writer).rejects.toThrow();
      const read = await reader; // within its 6 s wait, although the lock's lease runs 30 s
      await read.release();
      await reading.release();
    } finally {
      await other.app.close();
    }
  });

  it('a reader queued behind a writer of its own process gets in once the writer aborts', async () => {
    const other = await lockApp(store.target, { keyPrefix: prefix, leaseTime: 30_000 });
    try {
      const reading = await other.locks.acquire('rw', { mode: 'read' });
      const controller = new AbortController();
      const before = await store.commandCount();
      const writer = locks.acquire('rw', { mode: 'write', signal: controller.signal });
      await queued(store, before);
      const reader = locks.acquire('rw', { mode: 'read' });
      await joined();
      controller.abort(new Error('no longer needed'));
      await expect(writer).rejects.toThrow('no longer needed');
      const read = await reader;
      await read.release();
      await reading.release();
    } finally {
      await other.app.close();
    }
  });
});
