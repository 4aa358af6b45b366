/**
 * The two topologies of the cluster rows (one redis-server, a Redis Cluster) behind one shape,
 * this library on either, and the held-locks measurement (c) of cluster.ts.
 */
import { Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { Redis, type Cluster } from 'ioredis';
import { LockService, RedisLockModule, type RedisLockModuleOptions } from '../../lib';
import type { TestCluster } from '../../tools/redis/cluster';
import { LOOPBACK } from '../../tools/redis/redis-process';
import type { Adapter } from '../lib/adapters';
import { sleep } from '../../tools/time';

/** One topology under test: where its masters are and how to reach them. */
export interface Topology {
  name: string;
  masters: number[];
  source: Pick<RedisLockModuleOptions, 'redis' | 'cluster'>;
  /** A data client (contention state); the caller closes it. */
  dataClient(): Redis | Cluster;
  /** INFO commandstats `calls` of EVAL + EVALSHA on one master. */
  scriptCalls(port: number): Promise<number>;
  /** One INFO section of one master. */
  info(port: number, section: string): Promise<string>;
  resetStats(): Promise<void>;
}

/** This library through LockService.run, on its own Nest application context. */
export async function lockService(
  source: Topology['source'],
  options: Partial<RedisLockModuleOptions> = {},
): Promise<{ locks: LockService; adapter: Adapter }> {
  @Module({ imports: [RedisLockModule.forRoot({ ...source, waitTime: 60_000, ...options })] })
  class ClusterBenchModule {}
  const app = await NestFactory.createApplicationContext(ClusterBenchModule, { logger: false });
  const locks = app.get(LockService);
  return {
    locks,
    adapter: { name: 'run()', locked: (key, fn) => locks.run(key, fn), close: () => app.close() },
  };
}

/** (c): `held` locks with the watchdog on; script calls, bytes and memory on each master. */
export async function heldLocks(
  topology: Topology,
  config: { held: number; lease: number; periods: number },
) {
  const { locks, adapter } = await lockService(topology.source, { leaseTime: config.lease });
  const memoryBefore = await sumOf(topology, 'memory', 'used_memory');
  const handles = [];
  for (let i = 0; i < config.held; i += 500) {
    const batch = Array.from({ length: Math.min(500, config.held - i) }, (_, j) =>
      locks.acquire(`bench:cl:held:${i + j}`),
    );
    handles.push(...(await Promise.all(batch)));
  }
  const period = Math.floor(config.lease / 3);
  // Count whole rounds: start right after one (the first also loads the script on each
  // connection), read half a period after the last one counted.
  await afterRenewalRound(topology, period);
  const memoryAfter = await sumOf(topology, 'memory', 'used_memory');
  await topology.resetStats();
  const [inBefore, outBefore] = await netBytes(topology);
  const cpuBefore = await redisCpu(topology);
  await sleep(period * config.periods + period / 4);
  const cpu = (await redisCpu(topology)) - cpuBefore;
  const [inAfter, outAfter] = await netBytes(topology);
  const scripts = await scriptTime(topology);
  const calls = await Promise.all(topology.masters.map((port) => topology.scriptCalls(port)));
  const stillHeld = handles.filter((handle) => !handle.signal.aborted).length;
  await Promise.all(handles.map((handle) => handle.release().catch(() => undefined)));
  await adapter.close();
  const perLockPeriod = (bytes: number) => bytes / config.held / config.periods;
  return {
    stillHeld,
    callsPerPeriodPerMaster: calls.map((n) => n / config.periods),
    memoryPerLock: (memoryAfter - memoryBefore) / config.held,
    renewalBytesInPerLock: perLockPeriod(inAfter - inBefore),
    renewalBytesOutPerLock: perLockPeriod(outAfter - outBefore),
    /** Redis CPU (whole window, user + sys) and time inside the scripts, µs per lock renewal. */
    renewalCpuUsPerLock: perLockPeriod(cpu * 1e6),
    renewalScriptUsPerLock: perLockPeriod(scripts.usec),
  };
}

/** The sum over the masters of one numeric INFO field. */
export async function sumOf(topology: Topology, section: string, field: string): Promise<number> {
  const values = await Promise.all(
    topology.masters.map(async (port) => infoField(await topology.info(port, section), field)),
  );
  return values.reduce((a, b) => a + b, 0);
}

/** Bytes the masters received and sent (INFO stats), summed. */
async function netBytes(topology: Topology): Promise<[number, number]> {
  return [
    await sumOf(topology, 'stats', 'total_net_input_bytes'),
    await sumOf(topology, 'stats', 'total_net_output_bytes'),
  ];
}

function infoField(info: string, field: string): number {
  return Number(new RegExp(`^${field}:([\\d.]+)`, 'm').exec(info)?.[1] ?? Number.NaN);
}

/**
 * Resolves once a renewal round has ended: the script calls on the masters moved and then
 * stayed still for a fifth of a period (or after 3 periods without one, unaligned).
 */
async function afterRenewalRound(topology: Topology, period: number): Promise<void> {
  const total = async () =>
    (await Promise.all(topology.masters.map((port) => topology.scriptCalls(port)))).reduce(
      (a, b) => a + b,
    );
  let last = await total();
  let changedAt: number | undefined;
  const deadline = Date.now() + 3 * period;
  while (Date.now() < deadline) {
    await sleep(10);
    const now = await total();
    if (now !== last) [last, changedAt] = [now, Date.now()];
    else if (changedAt !== undefined && Date.now() - changedAt > period / 5) return;
  }
}

export function singleNode(server: { url: string; port: number }, admin: Redis): Topology {
  return {
    name: '1 redis-server',
    masters: [server.port],
    source: { redis: server.url },
    dataClient: () => new Redis(server.url),
    scriptCalls: async () => scriptCallsIn(await admin.info('commandstats')),
    info: (_port, section) => admin.info(section),
    resetStats: async () => void (await admin.config('RESETSTAT')),
  };
}

export function clusterTopology(cluster: TestCluster, masters: number[]): Topology {
  const nodes = cluster.ports.map((port) => ({ host: LOOPBACK, port }));
  return {
    name: `Redis Cluster, ${masters.length} masters`,
    masters,
    source: { cluster: { nodes } },
    dataClient: () => cluster.client(),
    scriptCalls: async (port) => scriptCallsIn(await cluster.admin.get(port).info('commandstats')),
    info: (port, section) => cluster.admin.get(port).info(section),
    resetStats: () => cluster.resetStats(),
  };
}

/** Redis CPU seconds (user + sys) of the masters, summed. */
export async function redisCpu(topology: Topology): Promise<number> {
  return (
    (await sumOf(topology, 'cpu', 'used_cpu_user')) + (await sumOf(topology, 'cpu', 'used_cpu_sys'))
  );
}

/** Script calls and the µs Redis spent running them (INFO commandstats), over the masters. */
export async function scriptTime(topology: Topology): Promise<{ calls: number; usec: number }> {
  let [calls, usec] = [0, 0];
  for (const port of topology.masters) {
    const stats = await topology.info(port, 'commandstats');
    for (const name of ['eval', 'evalsha']) {
      const match = new RegExp(`cmdstat_${name}:calls=(\\d+),usec=(\\d+)`).exec(stats);
      calls += Number(match?.[1] ?? 0);
      usec += Number(match?.[2] ?? 0);
    }
  }
  return { calls, usec };
}

function scriptCallsIn(commandstats: string): number {
  const calls = (name: string) =>
    Number(new RegExp(`cmdstat_${name}:calls=(\\d+)`).exec(commandstats)?.[1] ?? 0);
  return calls('eval') + calls('evalsha');
}
