import { Injectable } from '@nestjs/common';
import { setTimeout as delay } from 'node:timers/promises';
import { LockService, Locked } from '../../../../lib';
import { channelName } from '../../../../lib/stores/redis/redis-names';
import { STEADY_NODE_TIMEOUT } from '../../../../tools/redis/cluster';
import { suiteCluster } from '../../../support/suite-topology';
import { killChildren } from '../../../support/child-processes';
import { clusterApp, clusterWorker, removeWorkerBuild } from './cluster-kit';
import { sleep, until } from '../../../../tools/time';

@Injectable()
class Ledger {
  depth: number[] = [];
  constructor(readonly locks: LockService) {}

  @Locked('ledger:<0>')
  async post(account: string): Promise<void> {
    this.depth.push(this.locks.holdCount(`ledger:${account}`));
    await this.audit(account);
  }

  @Locked('ledger:<0>', { waitTime: 0 })
  async audit(account: string): Promise<void> {
    this.depth.push(this.locks.holdCount(`ledger:${account}`));
    expect(await this.locks.isLocked(`ledger:${account}`)).toBe(true);
  }
}

/** Locks on a 3-master Redis Cluster (with replicas), one cluster for the whole file. */
describe('locks on a Redis Cluster', () => {
  const suite = suiteCluster({
    masters: 3,
    replicasPerMaster: 1,
    nodeTimeout: STEADY_NODE_TIMEOUT,
  });
  const closers: (() => Promise<unknown>)[] = [];
  suite.closing(async () => {
    await killChildren();
    removeWorkerBuild();
    await Promise.all(closers.map((close) => close()));
  });
  async function app(options = {}, metadata = {}) {
    const started = await clusterApp(suite.cluster, options, metadata);
    closers.push(() => started.app.close());
    return started;
  }
  const scriptCalls = async (port: number) => {
    const stats = await suite.cluster.commandstats(port);
    return (stats.evalsha ?? 0) + (stats.eval ?? 0);
  };

  it('forRoot({ cluster }) takes locks of every slot, in parallel across slots, on their masters', async () => {
    const { locks } = await app();
    await suite.cluster.resetStats();
    let inside = 0;
    let most = 0;
    const keys = Array.from({ length: 24 }, (_, i) => `parallel:${i}`);
    // Each holder stays in until all are (or 5 s pass): no fixed window the grants must fit in.
    let allInside!: () => void;
    const all = new Promise<void>((resolve) => (allInside = resolve));
    await Promise.all(
      keys.map((key) =>
        locks.run(key, async () => {
          most = Math.max(most, ++inside);
          if (inside === keys.length) allInside();
          expect(await locks.isLocked(key)).toBe(true);
          await Promise.race([all, delay(5_000)]);
          inside--;
        }),
      ),
    );
    expect(most).toBe(keys.length); // different slots never wait for each other
    for (const port of await suite.cluster.masters())
      expect(await scriptCalls(port)).toBeGreaterThan(0);
    expect(await Promise.all(keys.map((key) => locks.isLocked(key)))).not.toContain(true);
  });

  it('uses a Cluster client the user owns and never closes it', async () => {
    const client = suite.cluster.client();
    const { app: owned, locks } = await clusterApp(suite.cluster, { client });
    const lock = await locks.acquire('owned');
    expect(await locks.isLocked('owned')).toBe(true);
    await lock.release();
    await owned.close();
    expect(client.status).toBe('ready');
    expect(await client.set('owned:after', '1')).toBe('OK');
  });

  it('re-enters locks and @Locked methods on a cluster', async () => {
    const { app: nest, locks } = await app({}, { providers: [Ledger] });
    const ledger = nest.get(Ledger);
    await ledger.post('acme');
    expect(ledger.depth).toEqual([1, 2]);
    await locks.run('outer', async () => {
      const inner = await locks.tryAcquire('outer'); // re-enters: no wait although held
      expect(inner).not.toBeNull();
      await inner!.release();
      expect(await locks.isLocked('outer')).toBe(true);
    });
    expect(await locks.isLocked('outer')).toBe(false);
  });

  it('excludes 4 processes from one key: a GET-then-SET counter loses no update', async () => {
    const { prefix } = await app();
    const started = Array.from({ length: 4 }, () =>
      clusterWorker(suite.cluster, prefix, ['count', 'counter', '25']),
    );
    await Promise.all(started.map((worker) => worker.line(/^done$/)));
    expect(await suite.cluster.client().get(`${prefix}{counter}:counter`)).toBe('100');
  }, 60_000);

  it('wakes a waiter in another process by the sharded release notice, long before the lease ends', async () => {
    const { locks, prefix } = await app({ leaseTime: 30_000 });
    const lock = await locks.acquire('notice');
    const waiter = clusterWorker(suite.cluster, prefix, ['wait', 'notice', '60000']);
    await waiter.line(/^waiting$/);
    const channel = channelName(`${prefix}notice`);
    const master = suite.cluster.nodeClient(await suite.cluster.masterForKey(`${prefix}notice`));
    await until(async () => {
      const [, count] = (await master.call('PUBSUB', 'SHARDNUMSUB', channel)) as [string, number];
      return Number(count) === 1;
    }, 20_000);
    const released = Date.now();
    await lock.release();
    await waiter.line(/^acquired$/);
    expect(Date.now() - released).toBeLessThan(10_000); // the lease was 30 s
    expect(
      (await suite.cluster.commandstats(await suite.cluster.masterForKey(channel))).spublish,
    ).toBeGreaterThan(0);
  }, 60_000);

  it('renews held locks with one call per 100 locks on each master', async () => {
    const { locks, prefix } = await app({ leaseTime: 3_000 });
    const keys = Array.from({ length: 300 }, (_, i) => `held:${i}`);
    const perMaster = new Map<number, number>();
    for (const key of keys) {
      const port = await suite.cluster.masterForKey(`${prefix}${key}`);
      perMaster.set(port, (perMaster.get(port) ?? 0) + 1);
    }
    const expected = new Map([...perMaster].map(([port, n]) => [port, Math.ceil(n / 100)]));
    expect([...expected.values()].reduce((a, b) => a + b)).toBeLessThan(10); // not 300
    const handles = await Promise.all(keys.map((key) => locks.acquire(key)));
    const renewed = async () => {
      for (const [port, calls] of expected) if ((await scriptCalls(port)) < calls) return false;
      return true;
    };
    // The first round may meet NOSCRIPT on a node connection (EVALSHA, then EVAL); count the
    // second one, resetting only once the first round's retries have landed (200 ms on).
    await suite.cluster.resetStats(); // the first round is a second away
    await until(renewed, 10_000);
    await sleep(200);
    await suite.cluster.resetStats();
    await until(renewed, 10_000);
    for (const [port, calls] of expected) expect(await scriptCalls(port)).toBe(calls);
    expect(handles.filter((handle) => handle.signal.aborted)).toEqual([]);
    await Promise.all(handles.map((handle) => handle.release()));
  });

  it('keeps locks held and renewed, and a waiter parked, through a slot migration (ASK, then MOVED)', async () => {
    const { locks, prefix } = await app({ leaseTime: 900 });
    const { locks: other } = await app({ keyPrefix: prefix, leaseTime: 30_000 });
    // One slot: the keys migrate together. Six locks renewed every 300 ms, one with a long lease.
    const renewedKeys = Array.from({ length: 6 }, (_, i) => `{mig}r${i}`);
    const [renewed, long] = [renewedKeys[0], '{mig}long'];
    const renewedLocks = await Promise.all(renewedKeys.map((key) => locks.acquire(key)));
    const held = await locks.acquire(long, { leaseTime: 30_000 });
    const from = await suite.cluster.masterForKey(`${prefix}${renewed}`);
    const to = (await suite.cluster.masters()).find((port) => port !== from)!;
    const [source, target] = [from, to].map((port) => suite.cluster.nodeClient(port));
    const channel = channelName(`${prefix}${long}`);
    const shardSubscribers = async (port: number) =>
      Number(
        (
          (await suite.cluster.nodeClient(port).call('PUBSUB', 'SHARDNUMSUB', channel)) as [
            string,
            number,
          ]
        )[1],
      );
    let waited = false;
    const parked = other.acquire(long, { waitTime: 30_000 }).then((handle) => {
      waited = true;
      return handle;
    });
    await until(async () => (await shardSubscribers(from)) === 1, 10_000);
    // Step by step: the keys move first, the slot stays MIGRATING, so the source answers ASK.
    const slot = String(await source.call('CLUSTER', 'KEYSLOT', `${prefix}${renewed}`));
    const ids = await Promise.all([source, target].map((node) => node.call('CLUSTER', 'MYID')));
    await target.call('CLUSTER', 'SETSLOT', slot, 'IMPORTING', String(ids[0]));
    await source.call('CLUSTER', 'SETSLOT', slot, 'MIGRATING', String(ids[1]));
    const keys = (await source.call('CLUSTER', 'GETKEYSINSLOT', slot, '100')) as string[];
    // Every lock of the test is in the slot; other tests' keys may share it (an unlock latch whose
    // random prefix hashed there was): all of them move.
    expect(keys).toEqual(
      expect.arrayContaining([...renewedKeys, long].map((key) => `${prefix}${key}`)),
    );
    await source.call('MIGRATE', '127.0.0.1', String(to), '', '0', '5000', 'KEYS', ...keys);
    await suite.cluster.resetStats();
    await sleep(1_200); // more than one lease, renewed only through ASK to the target
    const calls = await scriptCalls(to);
    expect(calls).toBeGreaterThanOrEqual(2);
    expect(calls).toBeLessThan(renewedKeys.length * 2); // batched per slot, not one call per lock
    expect(renewedLocks.filter((lock) => lock.signal.aborted)).toEqual([]);
    expect(await locks.remainingTtl(renewed)).toBeGreaterThan(0); // read through ASK as well
    // The slot is handed over: MOVED from now on.
    for (const port of await suite.cluster.masters())
      await suite.cluster.nodeClient(port).call('CLUSTER', 'SETSLOT', slot, 'NODE', String(ids[1]));
    await until(async () => (await suite.cluster.masterForKey(`${prefix}${renewed}`)) === to);
    await suite.cluster.resetStats();
    await until(async () => (await scriptCalls(to)) >= 2, 5_000); // renewed on the new master
    expect(renewedLocks.filter((lock) => lock.signal.aborted)).toEqual([]);
    expect(held.signal.aborted).toBe(false);
    expect(await locks.remainingTtl(renewed)).toBeGreaterThan(0);
    await Promise.all(renewedLocks.map((lock) => lock.release()));
    expect(await locks.isLocked(renewed)).toBe(false);
    // The parked waiter's channel follows its slot to the new master; the release notice wakes it.
    await until(async () => (await shardSubscribers(to)) === 1, 10_000);
    expect(await shardSubscribers(from)).toBe(0);
    expect(waited).toBe(false);
    const released = Date.now();
    await held.release();
    await (await parked).release();
    expect(Date.now() - released).toBeLessThan(5_000); // the holder's lease was 30 s
  }, 40_000);
});
