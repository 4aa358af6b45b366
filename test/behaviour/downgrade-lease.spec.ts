import { LockLostError, type LockService } from '../../lib';
import { lockApp, lockAppEach } from '../support/lock-app';
import { STORE_KINDS, suiteStore } from '../support/suite-store';
import { until } from '../../tools/time';

// A write hold with an explicit lease under which its chain also reads (a downgrade): the write
// ends at its lease in the store too, while the read hold lives on.
describe.each(STORE_KINDS)('a downgraded write’s own lease (%s store)', (kind) => {
  const store = suiteStore(kind);
  let locks: LockService;
  let prefix: string;

  // The read holds' 30 s lease (and its renewals) must not keep the write alive.
  lockAppEach(store, { leaseTime: 30_000, waitTime: 5_000 }, (made) => ({ locks, prefix } = made));

  /** Redis' hash of the lock: its mode and fields (nothing on the memory store). */
  const fields = async (name: string) => (await store.raw?.hgetall(`${prefix}${name}`)) ?? {};

  it('ends at its lease: the lock is then in read mode, other readers come in, the read hold stays', async () => {
    const write = await locks.acquire('dg', { mode: 'write', leaseTime: 800 });
    const read = await locks.runAs(write, () => locks.acquire('dg', { mode: 'read' }));
    await until(() => write.signal.aborted, 3_000);
    expect(write.signal.reason).toBeInstanceOf(LockLostError);
    const other = await lockApp(store.target, { keyPrefix: prefix });
    try {
      // Within its 5 s wait, although the lock's lease (the read's) runs 30 s.
      const otherRead = await other.locks.acquire('dg', { mode: 'read' });
      expect(read.signal.aborted).toBe(false);
      expect(await locks.isLocked('dg', { mode: 'write' })).toBe(false);
      expect(await locks.isLocked('dg', { mode: 'read' })).toBe(true);
      if (store.raw) {
        const hash = await fields('dg');
        expect(hash.mode).toBe('read');
        expect(Object.keys(hash).filter((field) => field.endsWith(':write'))).toEqual([]);
      }
      await otherRead.release();
    } finally {
      await other.app.close();
    }
    await read.release();
    expect(await locks.isLocked('dg', { mode: 'read' })).toBe(false);
  });

  it('keeps its own lease when the read hold ends first: a writer elsewhere gets in after it', async () => {
    const write = await locks.acquire('dg2', { mode: 'write', leaseTime: 800 });
    const read = await locks.runAs(write, () => locks.acquire('dg2', { mode: 'read' }));
    await read.release();
    const other = await lockApp(store.target, { keyPrefix: prefix });
    try {
      // Within its 5 s wait, although the read hold had raised the lock's lease to 30 s.
      const otherWrite = await other.locks.acquire('dg2', { mode: 'write' });
      expect(write.signal.aborted).toBe(true);
      await otherWrite.release();
    } finally {
      await other.app.close();
    }
  });
});
