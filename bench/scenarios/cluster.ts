/**
 * The Redis Cluster rows of the benchmark: this library on a local 3-master Redis Cluster beside
 * the same on one redis-server, both started here, in interleaved rounds (paired ratios):
 * (a) 64 concurrent workers, run() on a new key each cycle; (b) 8 workers on one key;
 * (c) 10 000 locks held with the watchdog: script calls per renewal period on each master.
 */
import 'reflect-metadata';
import { Redis } from 'ioredis';
import { STEADY_NODE_TIMEOUT, startCluster } from '../../tools/redis/cluster';
import { NO_PERSISTENCE, spawnRedisServer } from '../../tools/redis/redis-process';
import type { Adapter } from '../lib/adapters';
import {
  clusterTopology,
  heldLocks,
  lockService,
  redisCpu,
  scriptTime,
  singleNode,
  type Topology,
} from './cluster-topologies';
import { contend } from '../lib/contend';
import { fmt, median, nowUs, percentile, table } from '../lib/stats';

/** Sizes of the cluster rows (quick mode keeps the whole part within ~15 s). */
export interface ClusterBenchConfig {
  reps: number;
  cycles: number;
  workers: number;
  contendMs: number;
  held: number;
  lease: number;
  periods: number;
}

export const CLUSTER_CONFIG = {
  quick: {
    reps: 1,
    cycles: 2_000,
    workers: 64,
    contendMs: 1_000,
    held: 10_000,
    lease: 1_200,
    periods: 1,
  },
  full: {
    reps: 4,
    cycles: 10_000,
    workers: 64,
    contendMs: 3_000,
    held: 10_000,
    lease: 3_000,
    periods: 3,
  },
} satisfies Record<string, ClusterBenchConfig>;

/** What the cluster part measured: one row per topology, and violations of exclusion. */
export interface ClusterBenchResult {
  rows: {
    topology: string;
    cyclesPerSec: number;
    p50Us: number;
    p99Us: number;
    /** Per round, the rate over the single server's in the same round. */
    ratios: number[];
    handoffsPerSec: number;
    sectionsPerSec: number;
    violations: number;
    stillHeld: number;
    callsPerPeriodPerMaster: number[];
    callsPerPeriod: number;
    /** Redis CPU (user + sys, all masters) per run() cycle, µs; median of rounds. */
    cpuUsPerCycle: number;
    /** µs Redis spent inside one script call (commandstats); median of rounds. */
    scriptUsPerCall: number;
    /** used_memory growth per held lock, bytes. */
    memoryPerLock: number;
    /** Bytes to / from the masters per held lock per renewal period. */
    renewalBytesInPerLock: number;
    renewalBytesOutPerLock: number;
    /** Redis CPU, and time inside the renewal scripts, per held lock per period, µs. */
    renewalCpuUsPerLock: number;
    renewalScriptUsPerLock: number;
  }[];
  violations: number;
  markdown: string;
}

let keySeq = 0;
const freshKey = (tag: string) => `bench:cl:${tag}:${++keySeq}`;

async function concurrentCycles(adapter: Adapter, cycles: number, workers: number) {
  const latencies: number[] = [];
  let next = 0;
  const started = nowUs();
  await Promise.all(
    Array.from({ length: workers }, async () => {
      while (next++ < cycles) {
        const t = nowUs();
        await adapter.locked(freshKey('c'), () => Promise.resolve());
        latencies.push(nowUs() - t);
      }
    }),
  );
  return {
    cyclesPerSec: cycles / ((nowUs() - started) / 1e6),
    p50Us: percentile(latencies, 50),
    p99Us: percentile(latencies, 99),
  };
}

/** (a) with the Redis CPU it cost (all masters) and the time spent inside the scripts. */
async function measuredCycles(topology: Topology, adapter: Adapter, config: ClusterBenchConfig) {
  await topology.resetStats();
  const cpuBefore = await redisCpu(topology);
  const run = await concurrentCycles(adapter, config.cycles, config.workers);
  const cpu = (await redisCpu(topology)) - cpuBefore;
  const scripts = await scriptTime(topology);
  return {
    ...run,
    cpuUsPerCycle: (cpu * 1e6) / config.cycles,
    scriptUsPerCall: scripts.usec / scripts.calls,
  };
}

/**
 * Starts one redis-server and a 3-master cluster, runs (a) and (b) in `reps` interleaved
 * rounds and (c) once per topology, stops both and returns the rows and their markdown.
 */
export async function clusterBench(
  config: ClusterBenchConfig,
  progress: (message: string) => void,
): Promise<ClusterBenchResult> {
  const startedAt = Date.now();
  const server = await spawnRedisServer({ args: NO_PERSISTENCE });
  const admin = new Redis(server.url);
  const cluster = await startCluster({
    masters: 3,
    replicasPerMaster: 0,
    nodeTimeout: STEADY_NODE_TIMEOUT,
  }).catch(async (error: unknown) => {
    admin.disconnect();
    await server.stop();
    throw error;
  });
  progress(`cluster: 3 masters up in ${Date.now() - startedAt} ms (with one redis-server)`);
  try {
    const topologies = [
      singleNode(server, admin),
      clusterTopology(cluster, await cluster.masters()),
    ];
    const services = await Promise.all(topologies.map((t) => lockService(t.source)));
    const data = topologies.map((t) => t.dataClient());
    const throughput = topologies.map(() => [] as Awaited<ReturnType<typeof measuredCycles>>[]);
    const contention = topologies.map(() => [] as Awaited<ReturnType<typeof contend>>[]);
    const counters: number[][] = topologies.map(() => []);
    for (const { adapter } of services)
      await concurrentCycles(adapter, Math.min(500, config.cycles), config.workers); // warm-up
    for (let rep = 0; rep < config.reps; rep++) {
      for (let k = 0; k < topologies.length; k++) {
        const i = (k + rep) % topologies.length;
        progress(`cluster rep ${rep + 1}/${config.reps}: ${topologies[i].name}`);
        throughput[i].push(await measuredCycles(topologies[i], services[i].adapter, config));
        const keys = { lock: freshKey('contended'), state: freshKey('state') };
        const ids = Array.from({ length: 8 }, (_, w) => `w${w}`);
        const client = data[i] as Redis; // contend() uses single-key commands only
        contention[i].push(await contend(services[i].adapter, client, keys, ids, config.contendMs));
        counters[i].push(Number((await client.get(`${keys.state}:counter`)) ?? 0));
      }
    }
    await Promise.all(services.map((s) => s.adapter.close()));
    const held: Awaited<ReturnType<typeof heldLocks>>[] = [];
    for (const topology of topologies) {
      progress(`cluster: ${config.held} locks held on ${topology.name}`);
      held.push(await heldLocks(topology, config));
    }
    data.forEach((client) => client.disconnect());
    const seconds = config.contendMs / 1000;
    const rows = topologies.map((topology, i) => {
      const violations = contention[i].reduce(
        (sum, r, rep) => sum + r.violations + Math.abs(r.sections - counters[i][rep]),
        0,
      );
      const perMaster = held[i].callsPerPeriodPerMaster;
      return {
        topology: topology.name,
        cyclesPerSec: median(throughput[i].map((r) => r.cyclesPerSec)),
        p50Us: median(throughput[i].map((r) => r.p50Us)),
        p99Us: median(throughput[i].map((r) => r.p99Us)),
        // Paired: the cluster's rate over the single node's in the same round.
        ratios: throughput[i].map((r, rep) => r.cyclesPerSec / throughput[0][rep].cyclesPerSec),
        handoffsPerSec: median(contention[i].map((r) => r.handoffs / seconds)),
        sectionsPerSec: median(contention[i].map((r) => r.sections / seconds)),
        violations,
        stillHeld: held[i].stillHeld,
        callsPerPeriodPerMaster: perMaster,
        callsPerPeriod: perMaster.reduce((a, b) => a + b, 0),
        cpuUsPerCycle: median(throughput[i].map((r) => r.cpuUsPerCycle)),
        scriptUsPerCall: median(throughput[i].map((r) => r.scriptUsPerCall)),
        memoryPerLock: held[i].memoryPerLock,
        renewalBytesInPerLock: held[i].renewalBytesInPerLock,
        renewalBytesOutPerLock: held[i].renewalBytesOutPerLock,
        renewalCpuUsPerLock: held[i].renewalCpuUsPerLock,
        renewalScriptUsPerLock: held[i].renewalScriptUsPerLock,
      };
    });
    const violations = rows.reduce((sum, row) => sum + row.violations, 0);
    return { rows, violations, markdown: markdown(rows, config) };
  } finally {
    admin.disconnect();
    await cluster.stop();
    await server.stop();
  }
}

function markdown(rows: ClusterBenchResult['rows'], config: ClusterBenchConfig): string {
  const period = Math.floor(config.lease / 3);
  return [
    `### 8. Redis Cluster (3 masters, no replicas) beside one redis-server (${config.reps} interleaved rounds)`,
    '',
    table(
      [
        'topology',
        `${config.workers} workers: run() cycles/s`,
        'to 1 server (median, range of rounds)',
        'p50 µs',
        'p99 µs',
        `8 workers on 1 key: handoffs/s`,
        'sections/s',
        'violations',
        `${config.held} held: still held`,
        `script calls per ${period} ms period, per master`,
        'total',
        'locks per call',
      ],
      rows.map((r) => [
        r.topology,
        fmt(r.cyclesPerSec),
        `${fmt(median(r.ratios), 2)} (${fmt(Math.min(...r.ratios), 2)}-${fmt(Math.max(...r.ratios), 2)})`,
        fmt(r.p50Us),
        fmt(r.p99Us),
        fmt(r.handoffsPerSec),
        fmt(r.sectionsPerSec),
        r.violations,
        r.stillHeld,
        r.callsPerPeriodPerMaster.map((n) => fmt(n, 1)).join(' / '),
        fmt(r.callsPerPeriod, 1),
        fmt(config.held / r.callsPerPeriod),
      ]),
    ),
    '',
    table(
      [
        'topology',
        'Redis CPU per run() cycle (acquire + release), µs',
        'inside one script call, µs',
        'cycles/s one master serves at 100 % CPU',
        'memory per held lock, B',
        'renewal bytes per held lock per period, to / from Redis',
        'renewal Redis CPU per held lock per period, µs (inside the script)',
      ],
      rows.map((r) => [
        r.topology,
        fmt(r.cpuUsPerCycle, 1),
        fmt(r.scriptUsPerCall, 1),
        fmt(1e6 / r.cpuUsPerCycle),
        fmt(r.memoryPerLock),
        `${fmt(r.renewalBytesInPerLock, 1)} / ${fmt(r.renewalBytesOutPerLock, 1)}`,
        `${fmt(r.renewalCpuUsPerLock, 2)} (${fmt(r.renewalScriptUsPerLock, 2)})`,
      ]),
    ),
    '',
  ].join('\n');
}

/**
 * Scenario 8 of bench/run.ts: the cluster rows at the quick or full sizes. A cluster that
 * cannot start here is reported in the markdown, not thrown: only violations fail a run.
 */
export async function clusterScenario(
  quick: boolean,
  progress: (message: string) => void,
): Promise<{ markdown: string; violations: number; json: unknown }> {
  const config = quick ? CLUSTER_CONFIG.quick : CLUSTER_CONFIG.full;
  try {
    const result = await clusterBench(config, progress);
    return {
      markdown: result.markdown,
      violations: result.violations,
      json: { config, ...result },
    };
  } catch (error) {
    progress(`scenario 8 skipped: ${(error as Error).message}`);
    const markdown = `### 8. Redis Cluster: skipped (${(error as Error).message})\n`;
    return { markdown, violations: 0, json: { config, skipped: (error as Error).message } };
  }
}
