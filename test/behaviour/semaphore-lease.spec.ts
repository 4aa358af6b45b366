import type { LockService } from '../../lib';
import { lockApp, lockAppEach } from '../support/lock-app';
import { STORE_KINDS, suiteStore } from '../support/suite-store';
import { sleep, until } from '../../tools/time';

// Leases of permits: renewed while held, and the cap they put on a waiter's wait.
describe.each(STORE_KINDS)('semaphore permit leases (%s store)', (kind) => {
  const store = suiteStore(kind);
  let locks: LockService;

  lockAppEach(store, { leaseTime: 600, waitTime: 5_000 }, (made) => ({ locks } = made));

  it('keeps a permit past its lease while held (watchdog), and disposes of it', async () => {
    const semaphore = locks.semaphore('renewed', { permits: 1 });
    const permit = await semaphore.acquire();
    await sleep(1_000); // past the 600 ms lease: only renewals keep it
    expect(permit.signal.aborted).toBe(false);
    expect(await semaphore.available()).toBe(0);
    expect(await semaphore.tryAcquire()).toBeNull();
    await permit[Symbol.asyncDispose]();
    expect(await semaphore.available()).toBe(1);
  });

  it('wakes a waiter when a permit with a lease of its own runs out, without any release', async () => {
    // A 30 s default lease: the waiter's only cue is the held permit's 300 ms expiry.
    const slow = await lockApp(store.target, { leaseTime: 30_000 });
    try {
      const semaphore = slow.locks.semaphore('expiring', { permits: 1 });
      const permit = await semaphore.acquire({ leaseTime: 300 });
      const started = Date.now();
      const next = await semaphore.acquire({ waitTime: 10_000 });
      expect(Date.now() - started).toBeLessThan(5_000); // well before the wait or a lease ends
      // Its holder is told: the permit's own expiry timer fires about when the waiter takes it.
      await until(() => permit.signal.aborted, 1_000);
      await next.release();
    } finally {
      await slow.app.close();
    }
  });
});
