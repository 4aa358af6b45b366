import { LockKeyError, LockOptionsError, MemoryLockStore } from '../../lib';
import { lockApp, storeAppEach } from '../support/lock-app';
import { STORE_KINDS } from '../support/suite-store';

// Where the memory store once answered otherwise than Redis: both now give the same answer.
describe.each(STORE_KINDS)('the %s store agrees with the other', (kind) => {
  const suite = storeAppEach(kind, { leaseTime: 30_000, waitTime: 1_000 });

  it('refuses a lock of any kind, isLocked and forceUnlock on a semaphore’s name with LockKeyError, also once no permit is held', async () => {
    const { locks } = suite;
    const semaphore = locks.semaphore('shared-name', { permits: 2 });
    const permit = await semaphore.acquire();
    const refusals = () => [
      locks.acquire('shared-name'),
      locks.tryAcquire('shared-name', { mode: 'read' }),
      locks.acquire('shared-name', { mode: 'write' }),
      locks.acquire('shared-name', { fair: true }),
      locks.acquire(['other-name', 'shared-name']),
      locks.isLocked('shared-name'),
      locks.forceUnlock('shared-name'),
    ];
    for (const call of refusals()) await expect(call).rejects.toBeInstanceOf(LockKeyError);
    expect(await semaphore.available()).toBe(1); // the semaphore is untouched
    await permit.release();
    // Redis keeps the semaphore's count under the name: the name stays the semaphore's.
    for (const call of refusals()) await expect(call).rejects.toBeInstanceOf(LockKeyError);
    expect(await semaphore.available()).toBe(2);
    expect(await locks.isLocked('other-name')).toBe(false); // the group took nothing
  });

  it('refuses a semaphore on a held lock’s name with LockKeyError, and grants it once the lock is free', async () => {
    const { locks } = suite;
    const lock = await locks.acquire('lock-name');
    const semaphore = locks.semaphore('lock-name', { permits: 1 });
    await expect(semaphore.acquire()).rejects.toBeInstanceOf(LockKeyError);
    await expect(semaphore.available()).rejects.toBeInstanceOf(LockKeyError);
    expect(await locks.isLocked('lock-name')).toBe(true);
    await lock.release();
    const permit = await semaphore.acquire();
    await permit.release();
  });
});

describe('syncReplicas on the memory store (no replicas)', () => {
  it('is refused with LockOptionsError at boot and per call', async () => {
    const store = new MemoryLockStore();
    await expect(lockApp(store, { syncReplicas: 1 })).rejects.toBeInstanceOf(LockOptionsError);
    const { app, locks } = await lockApp(store);
    try {
      await expect(locks.acquire('k', { syncReplicas: 1 })).rejects.toBeInstanceOf(
        LockOptionsError,
      );
      await expect(
        locks.semaphore('s', { permits: 1 }).acquire({ syncReplicas: 1 }),
      ).rejects.toBeInstanceOf(LockOptionsError);
      expect(await locks.isLocked('k')).toBe(false);
    } finally {
      await app.close();
    }
  });
});
