import type { Redis } from 'ioredis';
import { redisScript, renewAll, rwLock, waitOf } from './script-kit';
import { scriptSuite } from './script-suite';
import { ioredisClient } from '../../../../lib/stores/redis/client/ioredis';

const renewOnNode = redisScript('renew-node.lua');
/** The downgraded write's own lease: far longer than the steps a test takes under load. */
const WRITE_LEASE = 10_000;

// A downgraded write's own lease key '<P>:<owner>:write:rwlock_timeout:1' (its end, Redis ms).
describe('read-write scripts: a downgraded write keeps its own lease', () => {
  const suite = scriptSuite();
  let raw: Redis;
  const fresh = () => rwLock(raw, suite.fresh('dg'));
  /** The write's lease key of `owner` on `lock`. */
  const writeLease = (lock: ReturnType<typeof rwLock>, owner: string) =>
    `${lock.prefix}:${owner}:write:rwlock_timeout:1`;
  const readHold = (lock: ReturnType<typeof rwLock>, owner: string) => ({
    kind: 'r' as const,
    keys: [lock.name, lock.leaseKey(owner)],
    owner,
  });
  beforeAll(() => (raw = suite.raw));
  /**
   * Moves the write's recorded end to the past, as its lease running out would: the scripts
   * compare it with Redis TIME. (Sleeping past a short lease instead failed under load, when
   * the steps before the sleep took longer than the lease.)
   */
  const endOfWrite = (lock: ReturnType<typeof rwLock>, owner: string) =>
    raw.set(writeLease(lock, owner), '0', 'KEEPTTL');

  it('a read renewal stretches the hash, not the write: past the write’s end the write is over', async () => {
    const lock = fresh();
    expect(await lock.write('w:1', WRITE_LEASE)).toBe(0);
    expect(await lock.read('w:1', 30_000)).toBe(0);
    expect(await raw.pttl(writeLease(lock, 'w:1'))).toBeGreaterThan(29_000); // lives with the hash
    // Another reader waits for the write's end, not the read's 30 s lease.
    expect(waitOf(await lock.read('r:1'))).toBeLessThanOrEqual(WRITE_LEASE);
    expect(await renewAll(raw, 30_000, [readHold(lock, 'w:1')])).toEqual([1]);
    expect(await raw.hget(lock.name, 'mode')).toBe('write');
    await endOfWrite(lock, 'w:1');
    expect(await renewAll(raw, 30_000, [readHold(lock, 'w:1')])).toEqual([1]);
    expect(await raw.hgetall(lock.name)).toEqual({ mode: 'read', 'w:1': '1' });
    expect(await raw.exists(writeLease(lock, 'w:1'))).toBe(0);
    expect(await lock.read('r:1')).toBe(0);
    // The write's release finds nothing.
    expect(await lock.writeRelease('w:1', 'w')).toBeNull();
  });

  it('a reader coming in past the write’s end ends it; a write renewal then reports it lost', async () => {
    const lock = fresh();
    expect(await lock.write('w:1', WRITE_LEASE)).toBe(0);
    expect(await lock.read('w:1', 30_000)).toBe(0);
    await endOfWrite(lock, 'w:1');
    expect(await lock.read('r:1')).toBe(0);
    expect(await raw.hget(lock.name, 'mode')).toBe('read');
    expect(await renewAll(raw, 30_000, [{ kind: 'w', keys: [lock.name], owner: 'w:1' }])).toEqual([
      0,
    ]);
  });

  it('a write renewal moves the write’s end; its release drops the key and leaves the read', async () => {
    const lock = fresh();
    expect(await lock.write('w:1', WRITE_LEASE)).toBe(0);
    expect(await lock.read('w:1', 30_000)).toBe(0);
    const before = Number(await raw.get(writeLease(lock, 'w:1')));
    expect(
      await renewAll(raw, 3 * WRITE_LEASE, [{ kind: 'w', keys: [lock.name], owner: 'w:1' }]),
    ).toEqual([1]);
    expect(Number(await raw.get(writeLease(lock, 'w:1')))).toBeGreaterThan(before + WRITE_LEASE);
    expect(await lock.writeRelease('w:1', 'w')).toBeGreaterThanOrEqual(0);
    expect(await raw.hgetall(lock.name)).toEqual({ mode: 'read', 'w:1': '1' });
    expect(await raw.exists(writeLease(lock, 'w:1'))).toBe(0);
  });

  it('a read released first gives the hash the write’s own lease back', async () => {
    const lock = fresh();
    expect(await lock.write('w:1', 2_000)).toBe(0);
    expect(await lock.read('w:1', 30_000)).toBe(0);
    expect(await raw.pttl(lock.name)).toBeGreaterThan(29_000);
    expect(await lock.readRelease('w:1', 'r')).toBe(-1);
    expect(await raw.pttl(lock.name)).toBeLessThanOrEqual(2_000);
    expect(await raw.exists(writeLease(lock, 'w:1'))).toBe(0);
  });

  it('leaves a Redisson downgrade (no write lease key) alone', async () => {
    const lock = fresh();
    await raw.hset(lock.name, 'mode', 'write', 'j:1:write', '1', 'j:1', '1');
    await raw.pexpire(lock.name, 30_000);
    await raw.set(lock.leaseKey('j:1'), '1', 'PX', 30_000);
    expect(waitOf(await lock.read('r:1'))).toBeGreaterThan(29_000);
    expect(await renewAll(raw, 30_000, [readHold(lock, 'j:1')])).toEqual([1]);
    expect(await raw.hgetall(lock.name)).toEqual({ mode: 'write', 'j:1:write': '1', 'j:1': '1' });
  });

  it('renew-node.lua (a Cluster master’s renewal) ends a write past its end and renews the read', async () => {
    const lock = fresh();
    expect(await lock.write('w:1', WRITE_LEASE)).toBe(0);
    expect(await lock.read('w:1', 30_000)).toBe(0);
    await endOfWrite(lock, 'w:1');
    const args = ['rw', lock.name, 'w:1', lock.leaseKey('w:1'), lock.name, 'w:1'];
    expect(await renewOnNode.run(ioredisClient(raw), 0, 30_000, ...args)).toEqual([1, 0]);
    expect(await raw.hgetall(lock.name)).toEqual({ mode: 'read', 'w:1': '1' });
  });
});
