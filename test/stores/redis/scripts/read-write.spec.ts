import type { Redis } from 'ioredis';
import { waitOf } from './script-kit';
import { scriptSuite } from './script-suite';
import { sleep } from '../../../../tools/time';

describe('read-write lock scripts against real Redis', () => {
  const suite = scriptSuite();
  let raw: Redis;
  beforeAll(() => (raw = suite.raw));

  it('lets many readers share, keeps one lease key per reader and the hash at the longest', async () => {
    const lock = await suite.rwLock();
    expect(await lock.read('a:1', 30_000)).toBe(0);
    expect(await lock.read('b:1', 60_000)).toBe(0);
    expect(await lock.read('c:1', 1_000)).toBe(0); // a shorter lease does not shorten the hash
    expect(await raw.hgetall(lock.name)).toEqual({
      mode: 'read',
      'a:1': '1',
      'b:1': '1',
      'c:1': '1',
    });
    expect(await raw.pttl(lock.leaseKey('a:1'))).toBeGreaterThan(29_000);
    expect(await raw.pttl(lock.leaseKey('c:1'))).toBeLessThanOrEqual(1_000);
    expect(await raw.pttl(lock.name)).toBeGreaterThan(59_000);
    expect(await lock.read('a:1', 30_000)).toBe(0); // resent: renews only, the count stays 1
    expect(await raw.hget(lock.name, 'a:1')).toBe('1');

    const busy = await lock.write('w:1');
    expect(waitOf(busy)).toBeGreaterThan(59_000);
    expect(waitOf(busy)).toBeLessThanOrEqual(60_000);

    // While readers remain, a release publishes nothing and answers -1; the hash's lease becomes
    // the longest remaining read lease.
    expect(await lock.readRelease('b:1', 'b')).toBe(-1);
    expect(await raw.pttl(lock.name)).toBeLessThanOrEqual(30_000);
    expect(await raw.pttl(lock.name)).toBeGreaterThan(29_000);
    expect(await lock.readRelease('a:1', 'a')).toBe(-1);
    expect(await raw.pttl(lock.name)).toBeLessThanOrEqual(1_000);
    expect(suite.listener.on(lock.channel)).toEqual([]);
    expect(await lock.readRelease('c:1', 'c')).toBe(1); // the last one: '0' to one listener
    expect(await suite.listener.next(lock.channel)).toBe('0');
    expect(await raw.exists(lock.name, lock.leaseKey('a:1'), lock.leaseKey('c:1'))).toBe(0);
    expect(await lock.write('w:1')).toBe(0);
  });

  it('a writer excludes readers and writers; its release publishes 1 and lets them in', async () => {
    const lock = await suite.rwLock();
    expect(await lock.write('w:1', 30_000)).toBe(0);
    expect(await lock.write('w:1', 30_000)).toBe(0); // resent: renews only
    expect(await raw.hgetall(lock.name)).toEqual({ mode: 'write', 'w:1:write': '1' });
    for (const refused of [await lock.write('x:1'), await lock.read('r:1')]) {
      expect(waitOf(refused)).toBeGreaterThan(29_000);
      expect(waitOf(refused)).toBeLessThanOrEqual(30_000);
    }
    expect(await raw.exists(lock.leaseKey('r:1'))).toBe(0); // a refused read leaves nothing
    expect(await lock.writeRelease('w:1', 'w')).toBe(1);
    expect(await suite.listener.next(lock.channel)).toBe('1');
    expect(await raw.exists(lock.name)).toBe(0);
    expect(await lock.read('r:1')).toBe(0);
    expect(await lock.readRelease('r:1', 'r')).toBe(1);
    expect(await suite.listener.next(lock.channel)).toBe('0');
  });

  it('downgrades: the writer reads too; its write release wakes readers, who then share', async () => {
    const lock = await suite.rwLock();
    expect(await lock.write('w:1')).toBe(0);
    expect(await lock.read('w:1', 10_000)).toBe(0);
    expect(await raw.hgetall(lock.name)).toEqual({ mode: 'write', 'w:1:write': '1', 'w:1': '1' });
    expect(await raw.pttl(lock.name)).toBeGreaterThan(29_000); // the write lease is kept
    expect(await lock.read('r:1')).toBeLessThan(0);

    expect(await lock.writeRelease('w:1', 'w')).toBe(1);
    expect(await suite.listener.next(lock.channel)).toBe('1'); // readers may come in now
    expect(await raw.hgetall(lock.name)).toEqual({ mode: 'read', 'w:1': '1' });
    expect(await lock.read('r:1')).toBe(0);
    expect(await lock.write('x:1')).toBeLessThan(0);
    expect(await lock.readRelease('w:1', 'v')).toBe(-1);
    expect(await lock.readRelease('r:1', 'r')).toBe(1);
    expect(await suite.listener.next(lock.channel)).toBe('0');
  });

  it('a downgraded writer that stops reading first keeps the write hold and its lease', async () => {
    const lock = await suite.rwLock();
    expect(await lock.write('w:1', 30_000)).toBe(0);
    expect(await lock.read('w:1', 5_000)).toBe(0);
    expect(await lock.readRelease('w:1', 'v')).toBe(-1);
    expect(await raw.hgetall(lock.name)).toEqual({ mode: 'write', 'w:1:write': '1' });
    expect(await raw.pttl(lock.name)).toBeGreaterThan(29_000);
    expect(suite.listener.on(lock.channel)).toEqual([]);
    expect(await lock.writeRelease('w:1', 'w')).toBe(1);
  });

  it('never grants write while any read is held, even to that reader (no upgrade)', async () => {
    const lock = await suite.rwLock();
    expect(await lock.read('r:1')).toBe(0);
    expect(await lock.write('r:1')).toBeLessThan(0);
    expect(await raw.hgetall(lock.name)).toEqual({ mode: 'read', 'r:1': '1' });
    expect(await lock.readRelease('r:1', 'r')).toBe(1);
  });

  it('a dead reader loses its hold when its lease key expires; live readers keep theirs', async () => {
    const lock = await suite.rwLock();
    expect(await lock.read('dead:1', 100)).toBe(0);
    expect(await lock.read('live:1', 30_000)).toBe(0);
    await sleep(150);
    expect(await raw.exists(lock.leaseKey('dead:1'))).toBe(0);
    expect(await raw.hget(lock.name, 'dead:1')).toBe('1'); // its field stays until the lock ends
    expect(await raw.pttl(lock.name)).toBeGreaterThan(29_000);
    expect(await lock.write('w:1')).toBeLessThan(0); // the live reader still excludes writers

    expect(await lock.readRelease('live:1', 'l')).toBe(1); // no live reader left: freed
    expect(await suite.listener.next(lock.channel)).toBe('0');
    expect(await raw.exists(lock.name)).toBe(0);
    expect(await lock.write('w:1')).toBe(0);
  });

  it('a reader still alive when another leaves sets the hash lease to its own', async () => {
    const lock = await suite.rwLock();
    expect(await lock.read('short:1', 2_000)).toBe(0);
    expect(await lock.read('long:1', 30_000)).toBe(0);
    expect(await lock.readRelease('long:1', 'l')).toBe(-1);
    // Read in one MULTI: the two PTTLs are taken at the same instant.
    const replies = await raw.multi().pttl(lock.name).pttl(lock.leaseKey('short:1')).exec();
    const [left, shortLeft] = replies!.map(([, ttl]) => Number(ttl));
    expect(left).toBeLessThanOrEqual(2_000); // not 30 s any more: the short reader's lease
    expect(Math.abs(left - shortLeft)).toBeLessThanOrEqual(5);
    expect(waitOf(await lock.write('w:1'))).toBeLessThanOrEqual(2_000);
  });

  it('finds other readers under a name with a hash tag (Redisson’s name rule)', async () => {
    const name = `{rw${Date.now()}}:doc`;
    const lock = await suite.rwLock(name);
    expect(lock.channel).toBe(`redisson_rwlock:${name}`);
    expect(lock.leaseKey('a:1')).toBe(`${name}:a:1:rwlock_timeout:1`);
    expect(await lock.read('a:1', 2_000)).toBe(0);
    expect(await lock.read('b:1', 30_000)).toBe(0);
    expect(await raw.exists(`${name}:a:1:rwlock_timeout:1`)).toBe(1);
    expect(await lock.readRelease('b:1', 'b')).toBe(-1); // a:1's key was found alive
    expect(await raw.pttl(lock.name)).toBeLessThanOrEqual(2_000);
    expect(await lock.forceUnlock()).toBe(1);
    expect(await raw.exists(`${name}:a:1:rwlock_timeout:1`)).toBe(0);
  });

  it('a release sent again returns its first answer; another request gets nil', async () => {
    const lock = await suite.rwLock();
    expect(await lock.read('a:1')).toBe(0);
    expect(await lock.read('b:1')).toBe(0);
    expect(await lock.readRelease('a:1', 'a')).toBe(-1);
    expect(await lock.readRelease('a:1', 'a')).toBe(-1);
    expect(await lock.readRelease('a:1', 'x')).toBeNull();
    expect(await lock.readRelease('b:1', 'b')).toBe(1);
    expect(await lock.readRelease('b:1', 'b')).toBe(1);
    expect(await lock.write('w:1')).toBe(0);
    expect(await lock.writeRelease('w:1', 'w')).toBe(1);
    suite.listener.close(); // the resend answers from the latch, whoever listens now
    expect(await lock.writeRelease('w:1', 'w')).toBe(1);
    expect(await lock.writeRelease('w:1', 'y')).toBeNull();
  });

  it('a release by a non-owner touches nothing and returns nil', async () => {
    const lock = await suite.rwLock();
    expect(await lock.write('w:1')).toBe(0);
    expect(await lock.read('w:1')).toBe(0);
    const before = await raw.hgetall(lock.name);
    expect(await lock.readRelease('x:1', 'a')).toBeNull();
    expect(await lock.writeRelease('x:1', 'b')).toBeNull();
    expect(await lock.writeRelease('w:1:write', 'c')).toBeNull(); // a field name is not an owner
    expect(await raw.hgetall(lock.name)).toEqual(before);
    expect(await raw.exists(lock.leaseKey('w:1'))).toBe(1);
    expect(await raw.keys(`redisson_unlock_latch:{${lock.name}}:*`)).toEqual([]);
    expect(suite.listener.on(lock.channel)).toEqual([]);
  });

  it('force unlock frees readers and the writer, deletes lease keys, publishes 1', async () => {
    const lock = await suite.rwLock();
    expect(await lock.read('a:1')).toBe(0);
    expect(await lock.read('b:1')).toBe(0);
    // A Redisson reader that re-entered: count 2, a lease key per level.
    await raw.hset(lock.name, 'java:7', 2);
    await raw.set(`${lock.prefix}:java:7:rwlock_timeout:1`, 1, 'PX', 30_000);
    await raw.set(`${lock.prefix}:java:7:rwlock_timeout:2`, 1, 'PX', 30_000);
    expect(await lock.forceUnlock()).toBe(1);
    expect(await suite.listener.next(lock.channel)).toBe('1');
    expect(await raw.keys(`${lock.prefix}*`)).toEqual([]);
    expect(await raw.exists(lock.name)).toBe(0);
    expect(await lock.forceUnlock()).toBe(0);

    expect(await lock.write('w:1')).toBe(0);
    expect(await lock.read('w:1')).toBe(0);
    expect(await lock.forceUnlock()).toBe(1);
    expect(await raw.exists(lock.name, lock.leaseKey('w:1'))).toBe(0);
  });
});
