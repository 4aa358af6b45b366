import { Injectable } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import {
  LeaderOnly,
  LockError,
  LockKeyError,
  LockLostError,
  LockOptionsError,
  LockService,
  type LeaderChange,
  type Leadership,
} from '../../lib';
import { lockApp, type LockApp } from '../support/lock-app';
import { STORE_KINDS, suiteStore } from '../support/suite-store';
import { sleep, until } from '../../tools/time';

/** A short lease, so that a loss is found quickly (the watchdog renews every third). */
const LEASE = 600;

@Injectable()
class Scheduler {
  runs = 0;
  constructor(readonly locks: LockService) {}

  /** Runs while leading; returns the term's signal and token as the leader lock's handle has them. */
  @LeaderOnly('scheduler')
  async tick(): Promise<{ signal: AbortSignal; token: number | undefined }> {
    this.runs++;
    const handle = this.locks.current()!;
    return Promise.resolve({ signal: handle.signal, token: handle.fencingToken });
  }
}

describe.each(STORE_KINDS)('leader election on the %s store', (kind) => {
  const store = suiteStore(kind);
  let apps: LockApp[] = [];

  /** `count` instances of one application (one key prefix), each with a Scheduler. */
  async function instances(count: number): Promise<LockApp[]> {
    const prefix = `t:${randomUUID().slice(0, 8)}:`;
    for (let i = 0; i < count; i++) {
      apps.push(
        await lockApp(
          store.target,
          { keyPrefix: prefix, leaseTime: LEASE },
          { providers: [Scheduler] },
        ),
      );
    }
    return apps.slice(-count);
  }

  afterEach(async () => {
    await Promise.all(apps.map(({ app }) => app.close()));
    apps = [];
  });

  /** The leaderships of `name` in `nodes`, and how many lead now. */
  const leaderships = (nodes: LockApp[], name = 'election') =>
    nodes.map(({ locks }) => locks.leader(name));
  const leaders = (all: Leadership[]) => all.filter((leadership) => leadership.isLeader);

  it('elects exactly one of three instances; whenLeader resolves for it; the term is its fencing token', async () => {
    const all = leaderships(await instances(3));
    await Promise.race(all.map((leadership) => leadership.whenLeader()));
    expect(leaders(all)).toHaveLength(1);
    const [leader] = leaders(all);
    expect(leader.term).toEqual(expect.any(Number));
    expect(leader.signal.aborted).toBe(false);
    for (const other of all.filter((leadership) => leadership !== leader)) {
      expect(other.term).toBeUndefined();
      expect(other.signal.aborted).toBe(true);
    }
    await sleep(LEASE * 2); // renewed by the watchdog: still the one leader
    expect(leaders(all)).toEqual([leader]);
  });

  it('resign(): another instance is elected promptly, with a higher term; the resigner does not win it back at once', async () => {
    const all = leaderships(await instances(3));
    await until(() => leaders(all).length === 1);
    const [first] = leaders(all);
    const term = first.term!;
    const signal = first.signal;
    await first.resign();
    expect(signal.aborted).toBe(true);
    expect(signal.reason).toBeInstanceOf(LockLostError);
    expect(first.isLeader).toBe(false);
    await until(() => leaders(all).length === 1, LEASE);
    const [second] = leaders(all);
    expect(second).not.toBe(first);
    expect(second.term).toBeGreaterThan(term);
    // Handing it back: the second resigns, and the first (stood down) may win again.
    await second.resign();
    await until(() => leaders(all).length === 1, LEASE * 2);
    expect(leaders(all)[0].term).toBeGreaterThan(second.term ?? term);
  });

  it('terms strictly increase over many hand-overs, never two leaders at once', async () => {
    const all = leaderships(await instances(3));
    const terms: number[] = [];
    let most = 0;
    const watch = setInterval(() => (most = Math.max(most, leaders(all).length)), 1);
    try {
      for (let round = 0; round < 6; round++) {
        await until(() => leaders(all).length === 1, LEASE * 2);
        const [leader] = leaders(all);
        terms.push(leader.term!);
        await leader.resign();
      }
    } finally {
      clearInterval(watch);
    }
    expect(most).toBe(1);
    expect([...terms].sort((a, b) => a - b)).toEqual(terms);
    expect(new Set(terms).size).toBe(terms.length);
  });

  it('changes$: the state on subscription, then each change; completes when closed', async () => {
    const [one, two] = leaderships(await instances(2));
    await until(() => one.isLeader || two.isLeader);
    const [leader, follower] = one.isLeader ? [one, two] : [two, one];
    const seen: LeaderChange[] = [];
    let completed = false;
    follower.changes$.subscribe({
      next: (change) => seen.push(change),
      complete: () => (completed = true),
    });
    const leaderSeen: LeaderChange[] = [];
    leader.changes$.subscribe((change) => leaderSeen.push(change));
    expect(seen).toEqual([{ leader: false }]);
    expect(leaderSeen).toEqual([{ leader: true, term: leader.term }]);
    await leader.close();
    expect(leaderSeen).toEqual([{ leader: true, term: expect.any(Number) }, { leader: false }]);
    await follower.whenLeader();
    expect(seen).toEqual([{ leader: false }, { leader: true, term: follower.term }]);
    await follower.close();
    expect(seen.at(-1)).toEqual({ leader: false });
    expect(completed).toBe(true);
    await expect(leader.whenLeader()).rejects.toBeInstanceOf(LockError);
  });

  it('a leader whose lock is deleted is told (signal, isLeader, changes$, lockLost$) and one is elected again', async () => {
    const nodes = await instances(2);
    const all = leaderships(nodes);
    await until(() => leaders(all).length === 1);
    const leader = leaders(all)[0];
    const node = nodes[all.indexOf(leader)];
    const lost: LockLostError[] = [];
    node.locks.lockLost$.subscribe((error) => lost.push(error));
    const changes: LeaderChange[] = [];
    leader.changes$.subscribe((change) => changes.push(change));
    const { signal, term } = leader;
    await store.deleteLock(`${node.prefix}election`);
    await until(() => signal.aborted, LEASE * 2);
    expect(signal.reason).toBeInstanceOf(LockLostError);
    expect(lost.map((error) => error.key)).toEqual(['election']);
    expect(changes).toContainEqual({ leader: false });
    await until(() => leaders(all).length === 1, LEASE * 2);
    expect(leaders(all)[0].term).toBeGreaterThan(term!);
  });

  it('app.close() of the leader hands over at once, before its lease would end', async () => {
    const nodes = await instances(2);
    const all = leaderships(nodes);
    await until(() => leaders(all).length === 1);
    const index = all.findIndex((leadership) => leadership.isLeader);
    const next = all[1 - index];
    const closedAt = performance.now();
    const elected = next.whenLeader().then(() => performance.now());
    await nodes[index].app.close();
    apps.splice(apps.indexOf(nodes[index]), 1);
    expect((await elected) - closedAt).toBeLessThan(LEASE);
    expect(all[index].isLeader).toBe(false);
  });

  it('@LeaderOnly runs the method only on the leader, as the owner of the leader lock; others resolve undefined', async () => {
    const nodes = await instances(2);
    const all = leaderships(nodes, 'scheduler');
    await until(() => leaders(all).length === 1);
    const results = await Promise.all(nodes.map(({ app }) => app.get(Scheduler).tick()));
    const index = all.findIndex((leadership) => leadership.isLeader);
    expect(results[1 - index]).toBeUndefined();
    const ran = results[index];
    expect(ran.token).toBe(all[index].term);
    expect(ran.signal.aborted).toBe(false);
    expect(nodes.map(({ app }) => app.get(Scheduler).runs)).toEqual(index === 0 ? [1, 0] : [0, 1]);
    await all[index].resign();
    expect(ran.signal.aborted).toBe(true); // the call's signal tells of the term's end
  });

  it('a custom leaseTime is renewed by the watchdog: the leader keeps leading past it', async () => {
    const [node] = await instances(1);
    // 1 s, not shorter: a 300 ms lease can be lost to an event-loop stall of a loaded CI run.
    const leadership = node.locks.leader('short', { leaseTime: 1_000 });
    await leadership.whenLeader();
    const term = leadership.term;
    await sleep(2_100); // two leases: only renewals keep it
    expect(leadership.isLeader).toBe(true);
    expect(leadership.term).toBe(term);
    const pttl = await store.pttl(`${node.prefix}short`);
    expect(pttl).toBeGreaterThan(0);
    expect(pttl).toBeLessThanOrEqual(1_000);
  });

  it('fencing: false leads without a term', async () => {
    const [node] = await instances(1);
    const leadership = node.locks.leader('unfenced', { fencing: false });
    await leadership.whenLeader();
    expect(leadership.isLeader).toBe(true);
    expect(leadership.term).toBeUndefined();
  });

  it('one campaign per name per application, closed for good; bad names and options fail at the call', async () => {
    const [{ locks }] = await instances(1);
    expect(locks.leader('same')).toBe(locks.leader('same'));
    expect(() => locks.leader('same', { leaseTime: 5_000 })).toThrow(LockOptionsError);
    expect(() => locks.leader('')).toThrow(LockKeyError);
    expect(() => locks.leader('a{b')).toThrow(LockKeyError);
    expect(() => locks.leader('x', { leaseTime: 5 })).toThrow(LockOptionsError);
    expect(() => locks.leader('x', { fenceing: true } as object)).toThrow(LockOptionsError);
    expect(() => locks.leader('x', 'fast' as never)).toThrow(LockOptionsError);
    // Closing is for good: the same closed leadership is answered afterwards.
    const first = locks.leader('again');
    await first.whenLeader();
    await first.close();
    expect(locks.leader('again')).toBe(first);
    expect(first.isLeader).toBe(false);
    await expect(first.whenLeader()).rejects.toBeInstanceOf(LockError);
  });
});
