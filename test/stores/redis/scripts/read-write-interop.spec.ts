import type { Redis } from 'ioredis';
import { RedissonSide, suffixName } from '../../../support/redisson-side';
import { rwLock, waitOf } from './script-kit';
import { scriptSuite } from './script-suite';
import { sleep } from '../../../../tools/time';

describe('read-write lock: our scripts and Redisson’s share one lock', () => {
  const suite = scriptSuite();
  let raw: Redis;
  let java: RedissonSide;
  beforeAll(() => {
    raw = suite.raw;
    java = new RedissonSide(raw);
  });

  /**
   * A Redisson reader (owner 1) waiting on `lock` while our owner `w:1` holds its write: our
   * write release, sent once the reader waits, and how the reader woke.
   */
  const readerWokenByWriteRelease = async (lock: ReturnType<typeof rwLock>) => {
    let released: Promise<number | null> | undefined;
    const wake = await java.waitFor(
      lock.channel,
      () => java.readLock(lock.name, 1, 30_000),
      20_000,
      () => {
        released ??= lock.writeRelease('w:1', 'w');
      },
    );
    return { wake, released };
  };

  it('a Redisson writer blocks our readers, and the 1 its release publishes is what lets them in', async () => {
    const lock = await suite.rwLock();
    expect(await java.writeLock(lock.name, 1, 30_000)).toBeNull();
    expect(await java.writeLock(lock.name, 1, 30_000)).toBeNull(); // Redisson re-enters in Redis
    const refused = await lock.read('r:1');
    expect(waitOf(refused)).toBeGreaterThan(59_000); // its re-entry added a lease
    expect(await java.writeUnlock(lock.name, 1)).toBe(0);
    expect(await lock.read('r:1')).toBeLessThan(0);
    expect(suite.listener.on(lock.channel)).toEqual([]);
    expect(await java.writeUnlock(lock.name, 1)).toBe(1);
    expect(await suite.listener.next(lock.channel)).toBe('1'); // the engine's readers wake on this
    expect(await lock.read('r:1')).toBe(0);
    expect(await lock.read('r:2')).toBe(0);
    expect(await java.writeLock(lock.name, 1, 30_000)).toBeGreaterThan(29_000);
  });

  it('a Redisson writer that keeps a re-entered hold sets its own lease, not the watchdog’s', async () => {
    const lock = await suite.rwLock();
    expect(await java.writeLock(lock.name, 1, 5_000)).toBeNull();
    expect(await java.writeLock(lock.name, 1, 5_000)).toBeNull();
    expect(await java.writeUnlock(lock.name, 1)).toBe(0); // Redisson's internalLockLeaseTime
    expect(waitOf(await lock.read('r:1'))).toBeLessThanOrEqual(5_000); // our reader waits no longer
    expect(await java.writeUnlock(lock.name, 1)).toBe(1);
    expect(await raw.keys(`redisson_unlock_latch:*${lock.name}*`)).toEqual([]); // deleted after
  });

  it('our writer blocks a Redisson reader, and our release wakes it', async () => {
    const lock = await suite.rwLock();
    expect(await lock.write('w:1', 30_000)).toBe(0);
    const { wake, released } = await readerWokenByWriteRelease(lock);
    expect(wake).toBe('message'); // not the 30 s TTL cap
    expect(await released).toBe(2); // the Redisson waiter and our listener
    expect(await raw.hgetall(lock.name)).toEqual({ mode: 'read', [java.owner(1)]: '1' });
    expect(await lock.write('w:2')).toBeLessThan(0);
  });

  it('our downgrade lets a waiting Redisson reader in when our write hold ends', async () => {
    const lock = await suite.rwLock();
    expect(await lock.write('w:1')).toBe(0);
    expect(await lock.read('w:1')).toBe(0);
    const { wake, released } = await readerWokenByWriteRelease(lock);
    expect(wake).toBe('message');
    expect(await released).toBe(2);
    expect(await suite.listener.next(lock.channel)).toBe('1');
    expect(await java.writeLock(lock.name, 2, 30_000)).toBeGreaterThan(0); // readers remain
    expect(await lock.readRelease('w:1', 'r')).toBe(-1);
    expect(await java.readUnlock(lock.name, 1)).toBe(1);
    expect(await suite.listener.next(lock.channel)).toBe('0');
  });

  it.each([
    ['a plain name', `rwx:shared:${Date.now()}`],
    ['a name with a hash tag', `{rwx${Date.now()}}:shared`],
  ])('shares read holds with a re-entrant Redisson reader under %s', async (_, name) => {
    const lock = await suite.rwLock(name);
    expect(await java.readLock(name, 1, 20_000)).toBeNull();
    expect(await java.readLock(name, 1, 40_000)).toBeNull(); // level 2, its own lease key
    const javaKey = (level: number) => `${suffixName(name, java.owner(1))}:rwlock_timeout:${level}`;
    expect(await raw.exists(javaKey(1), javaKey(2))).toBe(2);
    expect(await lock.read('r:1', 30_000)).toBe(0);
    expect(await raw.pttl(name)).toBeGreaterThan(39_000);

    expect(await lock.readRelease('r:1', 'r')).toBe(-1); // the Redisson reader holds on
    expect(await raw.pttl(name)).toBeGreaterThan(39_000); // its longest lease key, found by name
    expect(await java.readUnlock(name, 1)).toBe(0);
    expect(await raw.pttl(name)).toBeLessThanOrEqual(20_000);
    expect(await lock.write('w:1')).toBeLessThan(0);
    expect(await java.readUnlock(name, 1)).toBe(1);
    expect(await suite.listener.next(lock.channel)).toBe('0');
    expect(await lock.write('w:1')).toBe(0);
  });

  it('a dead Redisson reader does not keep our writer out once our live reader leaves', async () => {
    const lock = await suite.rwLock();
    expect(await java.readLock(lock.name, 1, 100)).toBeNull(); // its process dies
    expect(await lock.read('live:1', 30_000)).toBe(0);
    await sleep(150);
    expect(await lock.write('w:1')).toBeLessThan(0);
    expect(await lock.readRelease('live:1', 'l')).toBeGreaterThanOrEqual(0); // freed
    expect(await lock.write('w:1')).toBe(0);
  });

  it('our dead reader does not keep a Redisson writer out once its live reader leaves', async () => {
    const lock = await suite.rwLock();
    expect(await lock.read('dead:1', 100)).toBe(0);
    expect(await java.readLock(lock.name, 1, 30_000)).toBeNull();
    await sleep(150);
    expect(await java.writeLock(lock.name, 2, 30_000)).toBeGreaterThan(0);
    expect(await java.readUnlock(lock.name, 1)).toBe(1); // Redisson found our key gone
    expect(await suite.listener.next(lock.channel)).toBe('0');
    expect(await java.writeLock(lock.name, 2, 30_000)).toBeNull();
    expect(await lock.read('r:1')).toBeLessThan(0);
    expect(await lock.forceUnlock()).toBe(1); // frees a Redisson writer too
    expect(await suite.listener.next(lock.channel)).toBe('1');
    expect(await lock.read('r:1')).toBe(0);
  });

  /**
   * A known break, not fixed (it.failing: green while it lasts, red once fixed). Redisson's
   * read-lock watchdog sets the hash's PTTL to its own lease (30 s), also below a longer read
   * lease of ours; when the Redisson process then dies, the hash expires with our reader's field
   * while our reader's lease still runs, and a writer gets in. Our read-acquire raises the PTTL,
   * but nothing of ours runs after Redisson's renewal for a hold with an explicit lease (no
   * watchdog). Scaled down: Redisson's watchdog lease 200 ms, our read lease 5 s.
   */
  it.failing('a Redisson read-lock renewal does not cut our longer read lease short', async () => {
    const lock = await suite.rwLock();
    expect(await java.readLock(lock.name, 1, 200)).toBeNull();
    expect(await lock.read('r:1', 5_000)).toBe(0);
    expect(await java.renewRead(lock.name, [1], 200)).toBe(1); // then its process dies
    await sleep(300);
    expect(await raw.pttl(lock.leaseKey('r:1'))).toBeGreaterThan(4_000); // our hold runs on
    expect(await java.writeLock(lock.name, 2, 30_000)).not.toBeNull();
  });
});
