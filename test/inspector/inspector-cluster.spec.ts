import { LockInspector } from '../../lib';
import { keySlot } from '../../lib/stores/redis';
import { clusterApp, nodesOf } from '../stores/redis/cluster/cluster-kit';
import { suiteCluster } from '../support/suite-topology';
import { STEADY_NODE_TIMEOUT } from '../../tools/redis/cluster';

// list() scans every master of a Cluster; describe() reads a name on its slot's master.
describe('LockInspector on a Redis Cluster', () => {
  const suite = suiteCluster({
    masters: 3,
    replicasPerMaster: 0,
    nodeTimeout: STEADY_NODE_TIMEOUT,
  });

  it('lists the held locks of every master, and describes one with its waiters', async () => {
    const { app, locks, prefix } = await clusterApp(suite.cluster, { appName: 'cluster-app' });
    const inspector = await LockInspector.connect({
      cluster: { nodes: nodesOf(suite.cluster) },
      keyPrefix: prefix,
    });
    try {
      const keys = Array.from({ length: 12 }, (_, i) => `k${i}`);
      // The keys' slots fall on more than one master (3 masters split 16384 slots in thirds).
      expect(new Set(keys.map((key) => Math.floor(keySlot(prefix + key) / 5462))).size).toBe(3);
      const handles = await Promise.all(keys.map((key) => locks.acquire(key)));
      const listed = await inspector.list();
      expect(listed.map((lock) => lock.key)).toEqual([...keys].sort());
      expect(new Set(listed.map((lock) => lock.holders[0].client?.app))).toEqual(
        new Set(['cluster-app']),
      );
      expect(await inspector.list({ limit: 5 })).toHaveLength(5);

      const waiter = locks.detach(() => locks.acquire('k3', { waitTime: 20_000 }));
      let lock = await inspector.describe('k3');
      for (let i = 0; i < 200 && lock.waiting === 0; i++) {
        await new Promise((resolve) => setTimeout(resolve, 20));
        lock = await inspector.describe('k3');
      }
      expect(lock.kind).toBe('plain');
      expect(lock.holders[0].client?.pid).toBe(process.pid);
      expect(lock.waiting).toBe(1); // the subscriber of this process (sharded on Redis >= 7)
      const [registered] = (await inspector.clients()).filter(
        (c) => c.client?.app === 'cluster-app',
      );
      expect(registered.locks).toBe(12);
      await Promise.all(handles.map((handle) => handle.release()));
      await (await waiter).release();
      expect(await inspector.list()).toEqual([]);
    } finally {
      await inspector.close();
      await app.close();
    }
  }, 60_000);
});
