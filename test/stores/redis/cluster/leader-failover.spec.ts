import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { LockLostError, type Leadership } from '../../../../lib';
import { clusterApp, failoverSuite } from './cluster-kit';
import { until } from '../../../../tools/time';

/** The leader lease: a loss is told within it (plus a renewal period and slack). */
const LEASE = 1_500;

/** The leaderships of `all`, and the one that leads now (if exactly one does). */
const leaderOf = (all: Leadership[]) => {
  const leading = all.filter((leadership) => leadership.isLeader);
  return leading.length === 1 ? leading[0] : undefined;
};

/**
 * Leader election through failovers that lose the leader's lock (the replica paused, so it
 * never applied the grant): on a 3-master cluster with replicas (CLUSTER FAILOVER TAKEOVER) and
 * on a Sentinel set (SIGKILL of the primary). The leader is told as for any lock, and one
 * instance is elected again with a higher term (a lost token counter restarts above it).
 */
describe('leader election through failovers', () => {
  const { suite, closers, sentinelApp } = failoverSuite();

  it('Cluster: the leader whose lock a takeover lost is told within a lease; one is elected again, with a higher term', async () => {
    const keyPrefix = `c:${randomUUID().slice(0, 8)}:`;
    const master = await suite.cluster.masterForKey(`${keyPrefix}leader`);
    const replica = await suite.cluster.replicaOf(master);
    await suite.cluster.pauseWrites(replica, 20_000);
    const all: Leadership[] = [];
    try {
      for (let i = 0; i < 2; i++) {
        const { app, locks } = await clusterApp(suite.cluster, { keyPrefix, leaseTime: LEASE });
        closers.push(() => app.close());
        all.push(locks.leader('leader'));
      }
      await until(() => leaderOf(all) !== undefined, 5_000);
      const leader = leaderOf(all)!;
      const { signal, term } = leader;
      await suite.cluster.failover(replica, 'takeover');
      await suite.cluster.unpause(replica);
      const promoted = Date.now();
      await until(() => signal.aborted, LEASE * 2, { what: 'the leader told' });
      expect(Date.now() - promoted).toBeLessThan(LEASE + 500);
      expect(signal.reason).toBeInstanceOf(LockLostError);
      await until(() => leaderOf(all) !== undefined, LEASE * 3, { what: 'a new leader' });
      expect(leaderOf(all)!.term).toBeGreaterThan(term!);
    } finally {
      await suite.cluster.unpause(replica).catch(() => undefined);
    }
  }, 40_000);

  it('Sentinel: the leader whose lock the failover lost is told within a lease; one is elected again, with a higher term', async () => {
    const keyPrefix = `s:${randomUUID().slice(0, 8)}:`;
    const primary = await suite.sentinel.primary();
    const replica = suite.sentinel
      .nodes()
      .find((node) => node.kind === 'data' && node.port !== primary)!;
    const start = () => sentinelApp({ keyPrefix, leaseTime: LEASE });
    const raw = new Redis({ port: replica.port, host: replica.host, lazyConnect: false });
    raw.on('error', () => undefined);
    closers.push(() => Promise.resolve(raw.disconnect()));
    await suite.sentinel.pauseWrites(replica.port, 20_000);
    const all = (await Promise.all([start(), start()])).map((locks) => locks.leader('leader'));
    await until(() => leaderOf(all) !== undefined, 5_000);
    const leader = leaderOf(all)!;
    const { signal, term } = leader;
    const old = await suite.sentinel.killPrimary();
    const killed = Date.now();
    // Unpaused once its master link is down, so the buffered grant is dropped (not applied).
    await until(async () => /master_link_status:down/.test(await raw.info('replication')), 5_000);
    await suite.sentinel.unpause(replica.port);
    await until(() => signal.aborted, LEASE * 2, { what: 'the leader told' });
    expect(Date.now() - killed).toBeLessThan(LEASE + 1_000);
    await suite.sentinel.waitForNewPrimary(old);
    await until(() => leaderOf(all) !== undefined, LEASE * 4, { what: 'a new leader' });
    expect(leaderOf(all)!.term).toBeGreaterThan(term!);
  }, 40_000);
});
