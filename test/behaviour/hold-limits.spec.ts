import { LockLostError, LockOptionsError } from '../../lib';
import { lockApp, storeAppEach } from '../support/lock-app';
import { STORE_KINDS } from '../support/suite-store';
import { sleep, until } from '../../tools/time';

// holdAtLeast and maxHold (scheduled jobs), on real Redis and on the in-memory store alike.
describe.each(STORE_KINDS)('hold limits on the %s store', (kind) => {
  const suite = storeAppEach(kind, { leaseTime: 600, waitTime: 0 });

  it('keeps a lock released early held until holdAtLeast, without waking a waiter early', async () => {
    const { locks, prefix, store } = suite;
    const other = await lockApp(store.target, { keyPrefix: prefix, leaseTime: 600 });
    try {
      const before = Date.now(); // before the grant
      let ran = { from: 0, to: 0 };
      await locks.run('job', () => void (ran = { from: Date.now(), to: Date.now() }), {
        holdAtLeast: 500,
      });
      expect(await store.exists(`${prefix}job`)).toBe(true);
      const pttl = await store.pttl(`${prefix}job`);
      expect(pttl).toBeGreaterThan(0);
      // The rest of the period from the grant (not the watchdog's 600 ms lease), within the
      // clocks' 1 ms grain: the grant came before `ran.from`, the kept release after `ran.to`.
      expect(pttl).toBeLessThanOrEqual(500 - (ran.to - ran.from) + 2);
      expect(await other.locks.tryAcquire('job')).toBeNull();
      // A waiter gets it when the period ends, not at the (early) release.
      const handle = await other.locks.acquire('job', { waitTime: 3_000 });
      expect(Date.now() - before).toBeGreaterThanOrEqual(500);
      await handle.release();
    } finally {
      await other.app.close();
    }
  });

  it('releases at once after holdAtLeast has passed, and keeps only at the outermost release', async () => {
    const { locks, prefix, store } = suite;
    await locks.run('late', () => sleep(120), { holdAtLeast: 100 });
    expect(await store.exists(`${prefix}late`)).toBe(false);
    await locks.run(
      'nested',
      async () => {
        await locks.run('nested', () => sleep(20), { holdAtLeast: 100 });
        // Still the watchdog's lease (renewed every 200 ms): the inner release kept nothing.
        expect(await store.pttl(`${prefix}nested`)).toBeGreaterThan(100);
        expect(locks.holdCount('nested')).toBe(1);
      },
      { holdAtLeast: 50 },
    );
    await until(async () => !(await store.exists(`${prefix}nested`)), 2_000);
  });

  it('tells a holder whose lock vanished before its kept release, and leaves nothing behind', async () => {
    const { locks, prefix, store } = suite;
    const handle = await locks.acquire('gone', { holdAtLeast: 1_000 });
    await store.deleteLock(`${prefix}gone`);
    await expect(handle.release()).rejects.toBeInstanceOf(LockLostError);
    expect(await store.exists(`${prefix}gone`)).toBe(false);
  });

  it('refuses holdAtLeast on a multi-lock, before taking anything', async () => {
    const { locks, prefix, store } = suite;
    await expect(locks.run(['a', 'b'], () => 1, { holdAtLeast: 100 })).rejects.toBeInstanceOf(
      LockOptionsError,
    );
    expect(await store.exists(`${prefix}a`)).toBe(false);
  });

  it('tells a holder stuck past maxHold, naming it, and frees the lock for others', async () => {
    const { locks, prefix, store } = suite;
    const other = await lockApp(store.target, { keyPrefix: prefix, leaseTime: 600 });
    try {
      const started = Date.now();
      let signal: AbortSignal | undefined;
      const stuck = locks.run(
        'stuck',
        async (lock) => {
          signal = lock.signal;
          await until(() => lock.signal.aborted, 5_000); // never settles on its own
        },
        { maxHold: 300 },
      );
      await expect(stuck).rejects.toThrow(/maxHold \(300 ms\)/);
      expect(signal!.reason).toBeInstanceOf(LockLostError);
      const told = Date.now() - started;
      expect(told).toBeGreaterThanOrEqual(300);
      expect(await other.locks.run('stuck', () => 'ran', { waitTime: 1_000 })).toBe('ran');
    } finally {
      await other.app.close();
    }
  });
});
