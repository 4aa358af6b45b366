import type { LockService } from '../../../lib';
import { lockAppEach } from '../../support/lock-app';
import { RedissonLockSide } from '../../support/redisson-lock';
import { prefixName } from '../../support/redisson-side';
import { suiteStore } from '../../support/suite-store';
import { sleep, until } from '../../../tools/time';

// A Java service holding an RLock / RFencedLock of the leader name (its steps run by RedissonLockSide)
// is a leader to our instances, and ours is to it. Leases are 30 s: whoever is elected within a
// second was woken by the release message.
describe('leader election beside Redisson locks of the same name', () => {
  const store = suiteStore('redis');
  let locks: LockService;
  let prefix: string;
  let java: RedissonLockSide;
  lockAppEach(store, { leaseTime: 30_000 }, (made) => ({ locks, prefix } = made));
  beforeEach(() => (java = new RedissonLockSide(store.raw!)));

  it('a Java RLock holder leads: we wait, and its unlock elects us within a round trip or two', async () => {
    const name = `${prefix}leader`;
    expect(await java.lock(name, 1, 0)).toBeNull();
    const leadership = locks.leader('leader');
    await sleep(200);
    expect(leadership.isLeader).toBe(false);
    expect(await java.renew(name, 1)).toBe(1); // the Java watchdog keeps it
    const unlockedAt = performance.now();
    expect(await java.unlock(name, 1)).toBe(1);
    await leadership.whenLeader();
    expect(performance.now() - unlockedAt).toBeLessThan(1_000);
  });

  it("RFencedLock and our terms share the token counter: each side's term is above the other's", async () => {
    const name = `${prefix}fenced`;
    const javaToken = await java.fencedLock(name, 1, 0);
    expect(javaToken).toEqual(expect.any(Number));
    const leadership = locks.leader('fenced');
    await sleep(100);
    expect(leadership.isLeader).toBe(false);
    await java.unlock(name, 1);
    await leadership.whenLeader();
    expect(leadership.term).toBeGreaterThan(javaToken!);
    // Ours leads: the Java side is refused, until we resign.
    expect(await java.fencedLock(name, 2, 0)).toBeNull();
    const ourTerm = leadership.term!;
    await leadership.resign();
    const next = await java.fencedLock(name, 2, 0);
    expect(next).toBeGreaterThan(ourTerm);
    expect(leadership.isLeader).toBe(false);
    await java.unlock(name, 2);
    await until(() => leadership.isLeader, 5_000);
    expect(leadership.term).toBeGreaterThan(next!);
    expect(await store.raw!.exists(prefixName('redisson_lock_token', name))).toBe(1);
  });

  it('a Java holder that dies (its lease runs out unrenewed) is replaced within that lease', async () => {
    const name = `${prefix}dying`;
    expect(await java.lock(name, 1, 300)).toBeNull();
    const leadership = locks.leader('dying');
    const started = performance.now();
    await leadership.whenLeader();
    expect(performance.now() - started).toBeLessThan(300 + 500);
  });
});
