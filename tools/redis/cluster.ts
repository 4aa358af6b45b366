/**
 * A throw-away Redis Cluster for the tests and the benchmark: `redis-server` child processes on
 * free loopback ports (with free bus ports), each in its own temp dir, plus the admin moves tests
 * need (failover, kill, revive, write pauses, slot migration). See /work/shared/redis-topologies.md §1-2.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Cluster, Redis, type ClusterOptions, type RedisOptions } from 'ioredis';
import {
  cleanupOnExit,
  freePorts,
  LOOPBACK,
  NO_PERSISTENCE,
  spawnRedisServer,
  type RedisProcess,
} from './redis-process';
import {
  formCluster,
  ownerOf,
  readView,
  settleCluster,
  type ClusterNodeView,
} from './cluster-state';
import { AdminPool, parseCommandstats } from './topology-admin';

export { SLOTS } from './cluster-state';

/**
 * Every node's settings besides port, dir, persistence and node timeout (see
 * redis-topologies.md §1). The announced IP matters for a cluster of one: a node that has met
 * no other does not know its address and gives "" in CLUSTER SLOTS, which ioredis cannot reach.
 */
const NODE_ARGS = [
  ...['--cluster-enabled', 'yes', '--cluster-config-file', 'nodes.conf'],
  ...['--cluster-announce-ip', LOOPBACK],
  ...['--repl-diskless-sync-delay', '0'],
];

/**
 * A node timeout for clusters whose nodes are never killed or frozen (ClusterSpec.nodeTimeout):
 * long enough that a node starved of CPU by a parallel test run is never marked failed.
 */
export const STEADY_NODE_TIMEOUT = 15_000;

/** How many nodes to start. */
export interface ClusterSpec {
  masters?: number;
  replicasPerMaster?: number;
  /**
   * `cluster-node-timeout`, ms (default 1000: a killed master's replica is promoted within about
   * 3 s). A node silent this long is marked failed and, with no replica to promote, the cluster
   * refuses commands until it answers again: a cluster whose nodes are never killed wants a
   * long one, so a machine loaded by a parallel test run cannot take it down.
   */
  nodeTimeout?: number;
}

/** One node of the cluster, as the cluster sees it now. */
export interface ClusterNode {
  host: string;
  port: number;
  /** The pid of its current process (a revived node has a new one). */
  pid: number;
  role: 'master' | 'replica';
  alive: boolean;
}

/** A running test cluster; every `port` is one of `ports`. */
export class TestCluster {
  /** Admin connections to the nodes (closed by stop()). */
  readonly admin = new AdminPool();
  private readonly processes = new Map<number, RedisProcess>();
  private readonly clients = new Set<{ disconnect(): void }>();
  private readonly forgetDirs: () => void;

  /** Use startCluster(). */
  constructor(
    /** Every node's port, masters first. */
    readonly ports: readonly number[],
    private readonly dirs: readonly string[],
    /** `cluster-node-timeout` of every node, ms. */
    private readonly nodeTimeout: number,
  ) {
    this.forgetDirs = cleanupOnExit(() => this.removeDirs());
  }

  /** Starts (or restarts) the node on `port` in its own dir and waits until it answers PING. */
  async spawn(port: number): Promise<void> {
    const dir = this.dirs[this.ports.indexOf(port)];
    const args = [
      ...NODE_ARGS,
      ...['--cluster-node-timeout', String(this.nodeTimeout)],
      ...NO_PERSISTENCE,
      ...['--dir', dir],
    ];
    this.processes.set(port, await spawnRedisServer({ port, cwd: dir, args }));
  }

  /** Every node with its current role (read from a live node's CLUSTER NODES). */
  async nodes(): Promise<ClusterNode[]> {
    const view = await this.view();
    return this.ports.map((port) => ({
      host: LOOPBACK,
      port,
      pid: this.processes.get(port)!.pid,
      role: view.find((node) => node.port === port)!.role,
      alive: this.processes.get(port)!.alive(),
    }));
  }

  /** Ports of the masters that own slots, in slot order. */
  async masters(): Promise<number[]> {
    return (await this.view())
      .filter((node) => node.role === 'master' && node.slots.length > 0)
      .sort((a, b) => a.slots[0][0] - b.slots[0][0])
      .map((node) => node.port);
  }

  /** Port of a replica of the master on `masterPort` (from CLUSTER NODES). */
  async replicaOf(masterPort: number): Promise<number> {
    const view = await this.view();
    const master = view.find((node) => node.port === masterPort);
    const replica = view.find((node) => master && node.masterId === master.id);
    if (!replica) throw new Error(`no replica of ${masterPort} in the cluster`);
    return replica.port;
  }

  /** Port of the master that owns `key`'s slot (CLUSTER KEYSLOT, then CLUSTER NODES). */
  async masterForKey(key: string): Promise<number> {
    const slot = Number(await this.admin.get(this.live()[0]).call('CLUSTER', 'KEYSLOT', key));
    return ownerOf(slot, await this.view()).port;
  }

  /** A new ioredis Cluster on all nodes (closed by stop()); it has an `error` listener. */
  client(options?: ClusterOptions): Cluster {
    const client = new Cluster(
      this.ports.map((port) => ({ host: LOOPBACK, port })),
      options,
    );
    client.on('error', () => undefined);
    this.clients.add(client);
    return client;
  }

  /** A new ioredis client on one node (closed by stop()); it has an `error` listener. */
  nodeClient(port: number, options?: RedisOptions): Redis {
    const client = new Redis({ host: LOOPBACK, port, ...options });
    client.on('error', () => undefined);
    this.clients.add(client);
    return client;
  }

  /** INFO commandstats of one node: calls per command, e.g. `{ evalsha: 2 }`. */
  async commandstats(port: number): Promise<Record<string, number>> {
    return parseCommandstats(await this.admin.get(port).info('commandstats'));
  }

  /** SPUBLISH and PUBLISH calls on all masters since the last resetStats(). */
  async publishes(): Promise<{ spublish: number; publish: number }> {
    const counts = { spublish: 0, publish: 0 };
    for (const port of await this.masters()) {
      const stats = await this.commandstats(port);
      counts.spublish += stats.spublish ?? 0;
      counts.publish += stats.publish ?? 0;
    }
    return counts;
  }

  /** CONFIG RESETSTAT on every live node. */
  async resetStats(): Promise<void> {
    await Promise.all(this.live().map((port) => this.admin.get(port).config('RESETSTAT')));
  }

  /**
   * CLUSTER FAILOVER (`gentle`: the master hands over) or CLUSTER FAILOVER TAKEOVER (without
   * the master's consent) on a replica; resolves when every live node agrees on the new roles.
   */
  async failover(replicaPort: number, mode: 'gentle' | 'takeover' = 'gentle'): Promise<void> {
    const args = mode === 'takeover' ? ['FAILOVER', 'TAKEOVER'] : ['FAILOVER'];
    await this.admin.get(replicaPort).call('CLUSTER', ...args);
    await this.waitForPromotion(replicaPort);
  }

  /** SIGKILLs the node on `port` and waits for the process to exit. */
  async kill(port: number): Promise<void> {
    await this.processes.get(port)?.stop('SIGKILL');
  }

  /** Resolves when every live node sees the node on `replicaPort` as a master with slots. */
  async waitForPromotion(replicaPort: number): Promise<void> {
    await this.settle(`promotion of ${replicaPort}`, false, (view) =>
      view.some((node) => node.port === replicaPort && node.slots.length > 0),
    );
  }

  /** Restarts a killed node (same port, dir and nodes.conf) and waits until the cluster is ready. */
  async revive(port: number): Promise<void> {
    await this.spawn(port);
    await this.ready();
  }

  /**
   * Resolves when every live node reports cluster_state:ok, all agree on every live node's role,
   * master and slots with none flagged failing, and every live replica's link is up.
   */
  async ready(check: (view: ClusterNodeView[]) => boolean = () => true): Promise<void> {
    await this.settle('cluster ready', true, check);
  }

  /** CLIENT PAUSE `ms` WRITE on one node (replicas then buffer what their master sends). */
  async pauseWrites(port: number, ms: number): Promise<void> {
    await this.admin.get(port).call('CLIENT', 'PAUSE', String(ms), 'WRITE');
  }

  /** CLIENT UNPAUSE on one node. */
  async unpause(port: number): Promise<void> {
    await this.admin.get(port).call('CLIENT', 'UNPAUSE');
  }

  /**
   * Moves `slot` and its keys to the master on `toMasterPort` (SETSLOT IMPORTING/MIGRATING,
   * MIGRATE, SETSLOT NODE on every master); resolves when every live node agrees.
   */
  async migrateSlot(slot: number, toMasterPort: number): Promise<void> {
    const view = await this.view();
    const source = ownerOf(slot, view);
    const target = view.find((node) => node.port === toMasterPort);
    if (!target || target.role !== 'master') throw new Error(`${toMasterPort} is not a master`);
    if (source.port === target.port) return;
    const [to, from] = [this.admin.get(target.port), this.admin.get(source.port)];
    await to.call('CLUSTER', 'SETSLOT', String(slot), 'IMPORTING', source.id);
    await from.call('CLUSTER', 'SETSLOT', String(slot), 'MIGRATING', target.id);
    for (;;) {
      const keys = (await from.call('CLUSTER', 'GETKEYSINSLOT', String(slot), '100')) as string[];
      if (keys.length === 0) break;
      await from.call('MIGRATE', LOOPBACK, String(target.port), '', '0', '5000', 'KEYS', ...keys);
    }
    const masters = view.filter((node) => node.role === 'master' && this.isLive(node.port));
    for (const node of [target, source, ...masters.filter((m) => m !== target && m !== source)]) {
      await this.admin.get(node.port).call('CLUSTER', 'SETSLOT', String(slot), 'NODE', target.id);
    }
    await this.settle(`slot ${slot} on ${toMasterPort}`, false, (agreed) => {
      return ownerOf(slot, agreed).port === toMasterPort;
    });
  }

  /** Closes the clients, SIGKILLs every process and removes the dirs. */
  async stop(): Promise<void> {
    this.clients.forEach((client) => client.disconnect());
    this.clients.clear();
    this.admin.closeAll();
    await Promise.all([...this.processes.values()].map((server) => server.stop('SIGKILL')));
    this.removeDirs();
    this.forgetDirs();
  }

  private live(): number[] {
    return this.ports.filter((port) => this.isLive(port));
  }

  private isLive(port: number): boolean {
    return this.processes.get(port)?.alive() ?? false;
  }

  private view(port = this.live()[0]): Promise<ClusterNodeView[]> {
    return readView(this.admin, port);
  }

  private settle(what: string, links: boolean, check: (view: ClusterNodeView[]) => boolean) {
    return settleCluster(this.admin, () => this.live(), what, links, check);
  }

  private removeDirs(): void {
    this.dirs.forEach((dir) => rmSync(dir, { recursive: true, force: true }));
  }
}

/**
 * Starts a cluster of `masters` masters with `replicasPerMaster` replicas each (processes in
 * parallel) and resolves once it is truly ready (see TestCluster.ready). On failure it stops
 * what it started.
 */
export async function startCluster(spec: ClusterSpec = {}): Promise<TestCluster> {
  const { masters = 3, replicasPerMaster = 1, nodeTimeout = 1_000 } = spec;
  const ports = await freePorts(masters * (1 + replicasPerMaster), 10_000);
  const dirs = ports.map((port) => mkdtempSync(join(tmpdir(), `redis-cluster-${port}-`)));
  const cluster = new TestCluster(ports, dirs, nodeTimeout);
  try {
    await Promise.all(ports.map((port) => cluster.spawn(port)));
    await formCluster(cluster.admin, ports, masters);
    await cluster.ready((view) => {
      const withSlots = view.filter((node) => node.role === 'master' && node.slots.length > 0);
      const replicas = view.filter((node) => node.role === 'replica');
      return withSlots.length === masters && replicas.length === masters * replicasPerMaster;
    });
    return cluster;
  } catch (error) {
    await cluster.stop();
    throw error;
  }
}
