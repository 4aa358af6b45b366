import { SLOTS } from '../../../tools/redis/cluster';
import { suiteCluster } from '../../support/suite-topology';

/** Self-tests of the Cluster helper (tools/redis/cluster.ts), on one shared cluster. */
describe('test helper: startCluster()', () => {
  const suite = suiteCluster({ masters: 3, replicasPerMaster: 1 });

  it('starts 3 masters that cover all slots, each with its own replica', async () => {
    const { cluster } = suite;
    const masters = await cluster.masters();
    const replicas = await Promise.all(masters.map((port) => cluster.replicaOf(port)));
    const roles = (await cluster.nodes()).map((node) => `${node.port} ${node.role}`);
    expect(masters).toHaveLength(3);
    expect(new Set(replicas).size).toBe(3);
    expect(roles.sort()).toEqual(
      [...masters.map((p) => `${p} master`), ...replicas.map((p) => `${p} replica`)].sort(),
    );
    for (const port of cluster.ports) {
      const info = String(await cluster.nodeClient(port).call('CLUSTER', 'INFO'));
      expect(info).toContain('cluster_state:ok');
      expect(info).toContain(`cluster_slots_assigned:${SLOTS}`);
      expect(info).toContain(`cluster_slots_ok:${SLOTS}`);
    }
  });

  it('client() writes land on masterForKey(), and nowhere else', async () => {
    const { cluster } = suite;
    const client = cluster.client();
    await client.set('topology:write', 'here');
    const owner = await cluster.masterForKey('topology:write');
    expect(await cluster.nodeClient(owner).get('topology:write')).toBe('here');
    for (const port of (await cluster.masters()).filter((p) => p !== owner)) {
      await expect(cluster.nodeClient(port).get('topology:write')).rejects.toThrow(/MOVED/);
    }
  });

  it('commandstats() counts an EVALSHA on the master of its key only', async () => {
    const { cluster } = suite;
    const key = 'topology:script';
    const owner = await cluster.masterForKey(key);
    const sha = String(await cluster.nodeClient(owner).script('LOAD', 'return KEYS[1]'));
    await cluster.resetStats();
    expect(await cluster.client().evalsha(sha, 1, key)).toBe(key);
    for (const port of await cluster.masters()) {
      expect((await cluster.commandstats(port)).evalsha ?? 0).toBe(port === owner ? 1 : 0);
    }
  });

  it('failover() (gentle) swaps master and replica, keeping the data', async () => {
    const { cluster } = suite;
    const key = 'topology:failover';
    const client = cluster.client();
    await client.set(key, 'kept');
    const master = await cluster.masterForKey(key);
    const replica = await cluster.replicaOf(master);
    await cluster.failover(replica);
    const roles = new Map((await cluster.nodes()).map((node) => [node.port, node.role]));
    expect([roles.get(replica), roles.get(master)]).toEqual(['master', 'replica']);
    expect(await cluster.masterForKey(key)).toBe(replica);
    expect(await cluster.replicaOf(replica)).toBe(master);
    expect(await client.get(key)).toBe('kept');
  });

  it("migrateSlot() moves a key's slot, and the key with it", async () => {
    const { cluster } = suite;
    const key = 'topology:migrate';
    const client = cluster.client();
    await client.set(key, 'moved');
    const from = await cluster.masterForKey(key);
    const to = (await cluster.masters()).find((port) => port !== from)!;
    const slot = Number(await cluster.nodeClient(from).call('CLUSTER', 'KEYSLOT', key));
    await cluster.migrateSlot(slot, to);
    expect(await cluster.masterForKey(key)).toBe(to);
    expect(await cluster.nodeClient(to).get(key)).toBe('moved');
    await expect(cluster.nodeClient(from).get(key)).rejects.toThrow(/MOVED/);
    expect(await client.get(key)).toBe('moved');
  });

  it('stop() leaves no process alive', async () => {
    const { cluster } = suite;
    const pids = (await cluster.nodes()).map((node) => node.pid);
    await cluster.stop();
    const alive = pids.filter((pid) => {
      try {
        process.kill(pid, 0);
        return true;
      } catch {
        return false;
      }
    });
    expect(pids).toHaveLength(6);
    expect(alive).toEqual([]);
  });
});
