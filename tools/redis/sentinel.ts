/**
 * A throw-away Redis Sentinel set for the tests: one primary, one replica and three sentinels
 * (`redis-server <own conf> --sentinel`), all child processes on free loopback ports in one
 * temp dir. See /work/shared/redis-topologies.md §3.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis, type RedisOptions } from 'ioredis';
import {
  cleanupOnExit,
  freePorts,
  LOOPBACK,
  NO_PERSISTENCE,
  spawnRedisServer,
  type RedisProcess,
} from './redis-process';
import { AdminPool, pairs, parseInfo, untilNodes } from './topology-admin';

/** How long ready() waits for the sentinels to agree on the set, ms. */
export const SENTINELS_READY_TIMEOUT = 45_000;

/** One process of the set. */
export interface SentinelSetNode {
  host: string;
  port: number;
  pid: number;
  kind: 'data' | 'sentinel';
  alive: boolean;
}

/** A running primary/replica pair watched by three sentinels. */
export class TestSentinel {
  /** The monitored master's name. */
  readonly name = 'mymaster';
  /** The sentinels' addresses, as ioredis' `sentinels` option takes them. */
  readonly sentinels: { host: string; port: number }[];
  private readonly admin = new AdminPool();
  private readonly processes = new Map<
    number,
    { server: RedisProcess; kind: 'data' | 'sentinel' }
  >();
  private readonly clients = new Set<Redis>();
  private readonly forgetDir: () => void;

  /** Use startSentinel(). */
  constructor(
    private readonly dir: string,
    private readonly dataPorts: readonly number[],
    private readonly sentinelPorts: readonly number[],
  ) {
    this.sentinels = sentinelPorts.map((port) => ({ host: LOOPBACK, port }));
    this.forgetDir = cleanupOnExit(() => rmSync(dir, { recursive: true, force: true }));
  }

  /** Starts the primary, then the replica, with the sentinels in parallel. */
  async spawnAll(): Promise<void> {
    const [primary, replica] = this.dataPorts;
    const ids = this.sentinelPorts.map(() => randomBytes(20).toString('hex'));
    const data = async (port: number, extra: string[]) => {
      const args = [...NO_PERSISTENCE, '--repl-diskless-sync-delay', '0', ...extra];
      this.processes.set(port, {
        server: await spawnRedisServer({ port, args, cwd: this.dir }),
        kind: 'data',
      });
    };
    const sentinel = async (port: number, i: number) => {
      const dir = join(this.dir, String(port));
      mkdirSync(dir);
      const peers = this.sentinelPorts.flatMap((peer, j) =>
        peer === port ? [] : [`sentinel known-sentinel ${this.name} ${LOOPBACK} ${peer} ${ids[j]}`],
      );
      const conf = [
        `dir ${dir}`,
        `sentinel myid ${ids[i]}`,
        `sentinel monitor ${this.name} ${LOOPBACK} ${primary} 2`,
        `sentinel down-after-milliseconds ${this.name} 1000`,
        `sentinel failover-timeout ${this.name} 10000`,
        `sentinel parallel-syncs ${this.name} 1`,
        `sentinel known-replica ${this.name} ${LOOPBACK} ${replica}`,
        ...peers,
      ];
      const configFile = join(dir, 'sentinel.conf');
      writeFileSync(configFile, conf.join('\n') + '\n');
      const server = await spawnRedisServer({ port, configFile, args: ['--sentinel'], cwd: dir });
      this.processes.set(port, { server, kind: 'sentinel' });
    };
    await Promise.all([
      data(primary, []).then(() => data(replica, ['--replicaof', LOOPBACK, String(primary)])),
      ...this.sentinelPorts.map(sentinel),
    ]);
  }

  /**
   * Resolves when every sentinel sees the master with 2 other sentinels and 1 replica, all
   * linked and none down, and the replica's link to the primary is up.
   */
  async ready(): Promise<void> {
    // Sentinels find each other by hello messages every 2 s; on a loaded 2-core machine that
    // took over 20 s once, so the limit is generous (the poll returns as soon as they agree).
    await untilNodes(
      'sentinels ready',
      async () => {
        const views = await Promise.all(
          this.sentinelPorts.map(async (port) => {
            const sentinel = this.admin.get(port);
            const master = pairs(await sentinel.call('SENTINEL', 'MASTER', this.name));
            const peers = (await sentinel.call('SENTINEL', 'SENTINELS', this.name)) as unknown[];
            const replicas = (await sentinel.call('SENTINEL', 'REPLICAS', this.name)) as unknown[];
            const linked = [...peers, ...replicas].every((entry) => {
              const flags = pairs(entry).flags.split(',');
              return !flags.some((flag) => ['disconnected', 's_down', 'o_down'].includes(flag));
            });
            return (
              master.flags === 'master' &&
              master['num-other-sentinels'] === '2' &&
              master['num-slaves'] === '1' &&
              linked
            );
          }),
        );
        const replication = parseInfo(await this.admin.get(this.dataPorts[1]).info('replication'));
        return views.every(Boolean) && replication.master_link_status === 'up';
      },
      SENTINELS_READY_TIMEOUT,
    );
  }

  /** Every process of the set. */
  nodes(): SentinelSetNode[] {
    return [...this.processes].map(([port, { server, kind }]) => {
      return { host: LOOPBACK, port, pid: server.pid, kind, alive: server.alive() };
    });
  }

  /** The port of the primary, as a live sentinel names it. */
  async primary(): Promise<number> {
    return this.primaryAccordingTo(this.liveSentinels()[0]);
  }

  /**
   * A new ioredis client in Sentinel mode (closed by stop()), with an `error` listener and a
   * 50 ms reconnect to both sentinels and master; commands wait for it (maxRetriesPerRequest
   * null).
   */
  client(options?: RedisOptions): Redis {
    const client = new Redis({
      sentinels: this.sentinels,
      name: this.name,
      retryStrategy: () => 50,
      sentinelRetryStrategy: () => 50,
      maxRetriesPerRequest: null,
      ...options,
    });
    client.on('error', () => undefined);
    this.clients.add(client);
    return client;
  }

  /** SIGKILLs the current primary; resolves with its port once the process is gone. */
  async killPrimary(): Promise<number> {
    const port = await this.primary();
    await this.processes.get(port)!.server.stop('SIGKILL');
    return port;
  }

  /**
   * Resolves with the new primary's port once every live sentinel names a primary other than
   * `oldPort` and that server reports role:master.
   */
  async waitForNewPrimary(oldPort: number): Promise<number> {
    let elected = 0;
    await untilNodes(`a primary other than ${oldPort}`, async () => {
      const named = await Promise.all(this.liveSentinels().map((p) => this.primaryAccordingTo(p)));
      elected = named[0];
      if (elected === oldPort || named.some((port) => port !== elected)) return false;
      return parseInfo(await this.admin.get(elected).info('replication')).role === 'master';
    });
    return elected;
  }

  /** CLIENT PAUSE `ms` WRITE on one data node. */
  async pauseWrites(port: number, ms: number): Promise<void> {
    await this.admin.get(port).call('CLIENT', 'PAUSE', String(ms), 'WRITE');
  }

  /**
   * CLIENT UNPAUSE on one data node, again on a new admin connection when it fails: a failover
   * that reconfigures the node ends with Sentinel's CLIENT KILL TYPE normal there, which closes
   * the admin connection under a command in flight ("Connection is closed.").
   */
  async unpause(port: number): Promise<void> {
    await untilNodes(
      `${port} unpaused`,
      async () => {
        await this.admin.get(port).call('CLIENT', 'UNPAUSE');
        return true;
      },
      5_000,
    );
  }

  /** Closes the clients, SIGKILLs every process and removes the dir. */
  async stop(): Promise<void> {
    this.clients.forEach((client) => client.disconnect());
    this.clients.clear();
    this.admin.closeAll();
    await Promise.all([...this.processes.values()].map(({ server }) => server.stop('SIGKILL')));
    rmSync(this.dir, { recursive: true, force: true });
    this.forgetDir();
  }

  private liveSentinels(): number[] {
    return this.sentinelPorts.filter((port) => this.processes.get(port)?.server.alive());
  }

  private async primaryAccordingTo(sentinelPort: number): Promise<number> {
    const sentinel = this.admin.get(sentinelPort);
    const reply = await sentinel.call('SENTINEL', 'GET-MASTER-ADDR-BY-NAME', this.name);
    return Number((reply as string[])[1]);
  }
}

/**
 * Starts a primary, a replica and three sentinels (monitor `mymaster`, quorum 2,
 * down-after-milliseconds 1000, failover-timeout 10000) and resolves once ready (see
 * TestSentinel.ready). The sentinels' files list each other and the replica, so they need no
 * hello round to find them. On failure it stops what it started.
 */
export async function startSentinel(): Promise<TestSentinel> {
  const ports = await freePorts(5);
  const set = new TestSentinel(
    mkdtempSync(join(tmpdir(), 'redis-sentinel-')),
    ports.slice(0, 2),
    ports.slice(2),
  );
  try {
    await set.spawnAll();
    await set.ready();
    return set;
  } catch (error) {
    await set.stop();
    throw error;
  }
}
