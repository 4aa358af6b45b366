import { randomUUID } from 'node:crypto';
import { createCluster } from 'redis';
import { type LockService } from '../../../../lib';
import { nodeRedisClient } from '../../../../lib/node-redis';
import { channelName } from '../../../../lib/stores/redis/redis-names';
import type { TestCluster } from '../../../../tools/redis/cluster';
import { sleep, until } from '../../../../tools/time';
import { destroy } from '../../../support/node-redis-server';
import { suiteCluster } from '../../../support/suite-topology';
import { clusterApp, nodesOf } from './cluster-kit';

/**
 * The Redis store on a node-redis Cluster client (node-redis 6, `client: nodeRedisClient(...)`),
 * on a 3-master Cluster with a replica each: waiters on every master woken by sharded notices,
 * renewal batched per master, and sharded notices still waking waiters after a master's failover
 * (node-redis follows the channels to the promoted replica).
 */
describe('the Redis store on a node-redis Cluster client', () => {
  const suite = suiteCluster();
  const clients: { readonly isOpen: boolean; destroy(): void }[] = [];
  const closers: (() => Promise<unknown>)[] = [];
  suite.closing(async () => {
    for (const close of closers.splice(0).reverse()) await close().catch(() => undefined);
    for (const client of clients.splice(0)) destroy(client);
  });

  /** A node-redis Cluster client on the suite's cluster, not connected (the module connects it). */
  function nodeRedisCluster(cluster: TestCluster) {
    const client = createCluster({
      rootNodes: nodesOf(cluster).map(({ host, port }) => ({ url: `redis://${host}:${port}` })),
    });
    client.on('error', () => undefined);
    clients.push(client);
    return client;
  }

  /** Two LockServices (as two processes) on one key prefix, each on a node-redis Cluster client. */
  async function apps(leaseTime = 30_000): Promise<[LockService, LockService, string]> {
    const prefix = `nr:${randomUUID().slice(0, 8)}:`;
    const opened = await Promise.all(
      [0, 1].map(() =>
        clusterApp(suite.cluster, {
          client: nodeRedisClient(nodeRedisCluster(suite.cluster)),
          keyPrefix: prefix,
          leaseTime,
          waitTime: 10_000,
        }),
      ),
    );
    for (const { app } of opened) closers.push(() => app.close());
    return [opened[0].locks, opened[1].locks, prefix];
  }

  /** A key of `prefix` whose slot the master on `port` serves. */
  async function keyOn(port: number, prefix: string): Promise<string> {
    for (let i = 0; ; i++) {
      if ((await suite.cluster.masterForKey(`${prefix}k${i}`)) === port) return `k${i}`;
    }
  }

  /** `holder` holds `name`, `waiter` waits for it: woken by one sharded notice at the release. */
  async function wokenBySharded(
    holder: LockService,
    waiter: LockService,
    prefix: string,
    name: string,
  ): Promise<void> {
    const held = await holder.acquire(name);
    const waiting = waiter.acquire(name);
    waiting.catch(() => undefined); // awaited below
    const port = await suite.cluster.masterForKey(prefix + name);
    const channel = channelName(prefix + name);
    await until(async () => {
      const subscribed = await suite.cluster.admin
        .get(port)
        .call('PUBSUB', 'SHARDCHANNELS', channel);
      return (subscribed as string[]).length > 0;
    }, 5_000);
    await suite.cluster.resetStats();
    const started = Date.now();
    await held.release();
    const got = await waiting;
    expect(Date.now() - started).toBeLessThan(2_000); // the notice, not the 30 s lease
    expect(await suite.cluster.publishes()).toEqual({ spublish: 1, publish: 0 });
    await got.release();
  }

  it('wakes a waiter by a sharded notice on every master', async () => {
    const [first, second, prefix] = await apps();
    for (const port of await suite.cluster.masters()) {
      await wokenBySharded(first, second, prefix, await keyOn(port, prefix));
    }
  });

  it('renews the holds of every master in one script call per master and round', async () => {
    const [locks, , prefix] = await apps(1_500);
    const masters = await suite.cluster.masters();
    const names: string[] = [];
    for (let i = 0; names.length < 30; i++) names.push(`renew${i}`);
    const held = await Promise.all(names.map((name) => locks.acquire(name)));
    const ports = new Set(
      await Promise.all(names.map((n) => suite.cluster.masterForKey(prefix + n))),
    );
    expect(ports.size).toBe(masters.length); // the holds are spread over every master
    await suite.cluster.resetStats();
    await sleep(2_500); // past the lease: renewed every 500 ms
    for (const name of names) expect(await locks.isLocked(name)).toBe(true);
    for (const port of masters) {
      const stats = await suite.cluster.commandstats(port);
      // Per round one renew-node call per master (not one per hold), plus the isLocked reads.
      expect((stats.evalsha ?? 0) - 10).toBeLessThanOrEqual(8);
    }
    await Promise.all(held.map((hold) => hold.release()));
  });

  it('wakes waiters by sharded notices after a master fails over to its replica', async () => {
    const [first, second, prefix] = await apps();
    const master = (await suite.cluster.masters())[0];
    const name = await keyOn(master, prefix);
    await wokenBySharded(first, second, prefix, name); // subscribed on the master
    const replica = await suite.cluster.replicaOf(master);
    await suite.cluster.kill(master);
    await suite.cluster.waitForPromotion(replica);
    await until(async () => {
      try {
        const lock = await first.acquire(name, { waitTime: 0 });
        await lock.release();
        return true;
      } catch {
        return false;
      }
    }, 20_000);
    await wokenBySharded(first, second, prefix, name);
    await suite.cluster.revive(master);
  });

  it('waits for a replica with syncReplicas: the script and its WAIT on the master’s connection', async () => {
    const [locks, , prefix] = await apps();
    const [master, ...others] = await suite.cluster.masters();
    const name = await keyOn(master, prefix);
    await suite.cluster.resetStats();
    // Granted only once the master's replica acknowledged (WAIT answered 1 on its connection).
    const lock = await locks.acquire(name, { syncReplicas: 1 });
    await lock.release();
    expect((await suite.cluster.commandstats(master)).wait).toBeGreaterThanOrEqual(1);
    for (const port of others)
      expect((await suite.cluster.commandstats(port)).wait).toBeUndefined();
  });

  it('runs the scripts by SHA: EVALSHA, no EVAL once each master has loaded them', async () => {
    const [locks] = await apps();
    await suite.cluster.resetStats();
    for (let i = 0; i < 20; i++) await (await locks.acquire(`sha${i}`)).release();
    let evalsha = 0;
    for (const port of await suite.cluster.masters()) {
      const stats = await suite.cluster.commandstats(port);
      evalsha += stats.evalsha ?? 0;
      // EVAL only where a script was missing: the acquire's and the release's, once each.
      expect(stats.eval ?? 0).toBeLessThanOrEqual(2);
    }
    expect(evalsha).toBeGreaterThanOrEqual(40);
  });
});
