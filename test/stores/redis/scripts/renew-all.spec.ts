import type { Redis } from 'ioredis';
import { LockScripts } from '../../../../lib/stores/redis/lock-scripts';
import { fairLock, renewAll, rwLock, type RenewHold } from './script-kit';
import { scriptSuite } from './script-suite';
import { ioredisClient } from '../../../../lib/stores/redis/client/ioredis';

describe('renew-all.lua: one batch of holds of mixed kinds', () => {
  const suite = scriptSuite();
  let raw: Redis;
  const unique = (kind: string) => suite.fresh(`renew:${kind}`);
  /** A plain lock held by `owner`, taken with today's acquire.lua. */
  const plainLock = async (owner: string) => {
    const name = unique('plain');
    await LockScripts.acquire.run(ioredisClient(raw), 1, name, 5_000, owner);
    return name;
  };
  beforeAll(() => (raw = suite.raw));

  it('renews plain, read, write and fair holds in one call and reports the lost ones', async () => {
    const plain = await plainLock('p:1');
    const shared = rwLock(raw, unique('rw'));
    expect(await shared.read('r:1', 5_000)).toBe(0);
    expect(await shared.read('long:1', 120_000)).toBe(0);
    const exclusive = rwLock(raw, unique('rw'));
    expect(await exclusive.write('w:1', 5_000)).toBe(0);
    const fair = fairLock(raw, unique('fair'));
    expect(await fair.acquire('f:1', { lease: 5_000 })).toBe(0);
    await raw.del(shared.leaseKey('r:1')); // its lease key ran out late; the hash excluded writers

    const holds: RenewHold[] = [
      { kind: 'l', keys: [plain], owner: 'p:1' },
      { kind: 'r', keys: [shared.name, shared.leaseKey('r:1')], owner: 'r:1' },
      { kind: 'w', keys: [exclusive.name], owner: 'w:1' },
      { kind: 'l', keys: [fair.name], owner: 'f:1' },
      { kind: 'l', keys: [plain], owner: 'other:1' },
      { kind: 'r', keys: [shared.name, shared.leaseKey('gone:1')], owner: 'gone:1' },
      { kind: 'w', keys: [shared.name], owner: 'r:1' }, // a reader is not the writer
    ];
    expect(await renewAll(raw, 60_000, holds)).toEqual([1, 1, 1, 1, 0, 0, 0]);
    for (const key of [plain, exclusive.name, fair.name, shared.leaseKey('r:1')]) {
      expect(await raw.pttl(key)).toBeGreaterThan(59_000);
    }
    expect(await raw.pttl(shared.name)).toBeGreaterThan(119_000); // never below the longest read
    expect(await raw.exists(shared.leaseKey('gone:1'))).toBe(0); // a lost hold creates nothing
  });

  it('renews a plain lock its owner holds to the lease, and reports 0 for one it does not', async () => {
    const names = [await plainLock('p:1'), await plainLock('p:2'), unique('missing')];
    const owners = ['p:1', 'x:9', 'p:3'];
    await Promise.all(names.slice(0, 2).map((name) => raw.pexpire(name, 5_000)));
    const holds = names.map((name, i): RenewHold => ({
      kind: 'l',
      keys: [name],
      owner: owners[i],
    }));
    expect(await renewAll(raw, 40_000, holds)).toEqual([1, 0, 0]);
    const ttl = await Promise.all(names.map((name) => raw.pttl(name)));
    expect(ttl[0]).toBeGreaterThan(39_000); // renewed
    expect(ttl[1]).toBeLessThanOrEqual(5_000); // another owner's lock: untouched
    expect(ttl[2]).toBe(-2); // nothing created
  });

  it('lets a write hold keep a longer lease its downgraded read gave the hash', async () => {
    const lock = rwLock(raw, unique('rw'));
    expect(await lock.write('w:1', 5_000)).toBe(0);
    expect(await lock.read('w:1', 90_000)).toBe(0);
    const holds: RenewHold[] = [{ kind: 'w', keys: [lock.name], owner: 'w:1' }];
    expect(await renewAll(raw, 30_000, holds)).toEqual([1]);
    expect(await raw.pttl(lock.name)).toBeGreaterThan(89_000);
  });

  it('refuses a batch whose keys or kinds do not match, before renewing anything', async () => {
    const plain = await plainLock('p:1');
    await raw.pexpire(plain, 5_000);
    const hold = (kind: string, keys: string[]) =>
      ({ kind, keys, owner: 'p:1' }) as unknown as RenewHold;
    await expect(renewAll(raw, 60_000, [hold('l', [plain]), hold('x', [plain])])).rejects.toThrow(
      /unknown hold kind "x"/,
    );
    await expect(renewAll(raw, 60_000, [hold('l', [plain]), hold('r', [plain])])).rejects.toThrow(
      /do not match/,
    );
    expect(await raw.pttl(plain)).toBeLessThanOrEqual(5_000);
  });
});
