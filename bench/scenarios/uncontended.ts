/**
 * Scenarios 1, 2 and 6 of bench/run.ts: uncontended acquire + release on a new key each cycle,
 * sequential (1) and with concurrent workers (2), in interleaved rounds after a warm-up, with
 * the CPU both sides spent; and what @Locked costs over LockService.run on those rows (6).
 */
import type { Redis } from 'ioredis';
import { redisCpuUs } from '../lib/redis-info';
import { cycles, fmt, median, table } from '../lib/stats';

/** One measurement: throughput, latency and, once withCpu adds them, the CPU per cycle. */
export interface Throughput {
  cyclesPerSec: number;
  p50Us: number;
  p99Us: number;
  /** CPU time of this (benchmark) process per cycle, µs: the client side of the cost. */
  nodeCpuUs?: number;
  /** CPU time of redis-server per cycle, µs (INFO cpu): the server side of the cost. */
  redisCpuUs?: number;
}

/** One implementation under test: its name and one acquire + release cycle on `key`. */
export interface Implementation {
  name: string;
  cycle: (key: string) => Promise<unknown>;
}

/** One row of the scenario 1 or 2 table: medians over rounds, ratios paired within a round. */
export interface ThroughputRow {
  name: string;
  cyclesPerSec: number;
  ratio: number;
  floorRatio: number;
  peerRatio: number;
  p50Us: number;
  p99Us: number;
  nodeCpuUs: number;
  redisCpuUs: number;
}

/** Sizes of scenarios 1 and 2. */
export interface UncontendedConfig {
  reps: number;
  sequential: number;
  concurrent: number;
  workers: number;
}

/** Runs one measurement and adds the CPU both sides spent on it, per cycle. */
async function withCpu(
  admin: Redis,
  cycles: number,
  measure: () => Promise<Throughput>,
): Promise<Throughput> {
  const redisBefore = await redisCpuUs(admin);
  const nodeBefore = process.cpuUsage();
  const result = await measure();
  const node = process.cpuUsage(nodeBefore);
  const redis = (await redisCpuUs(admin)) - redisBefore;
  return { ...result, nodeCpuUs: (node.user + node.system) / cycles, redisCpuUs: redis / cycles };
}

/** `n` cycles one after the other, a new key each. */
const sequential = (
  run: (key: string) => Promise<unknown>,
  n: number,
  freshKey: (tag: string) => string,
): Promise<Throughput> => cycles(() => run(freshKey('s')), n, 1);

/** `n` cycles shared by `workers` concurrent loops, a new key each. */
const concurrent = (
  run: (key: string) => Promise<unknown>,
  n: number,
  workers: number,
  freshKey: (tag: string) => string,
): Promise<Throughput> => cycles(() => run(freshKey('c')), n, workers);

/**
 * Scenarios 1 and 2: a warm-up, then `config.reps` rounds, the order rotating each round, of a
 * sequential measurement per implementation, then a concurrent one per implementation. The
 * first implementation is the raw limit; `names` says which is the protocol floor and which are
 * the peers.
 */
export async function uncontendedScenario(
  implementations: Implementation[],
  names: { floor: string; peers: string[] },
  admin: Redis,
  config: UncontendedConfig,
  freshKey: (tag: string) => string,
  progress: (message: string) => void,
): Promise<{
  scenario1: ThroughputRow[];
  scenario2: ThroughputRow[];
  seqRuns: Map<string, Throughput[]>;
  concRuns: Map<string, Throughput[]>;
}> {
  progress('warm-up');
  for (const impl of implementations)
    await sequential(impl.cycle, Math.min(500, config.sequential), freshKey);
  const seqRuns = new Map<string, Throughput[]>(implementations.map((i) => [i.name, []]));
  const concRuns = new Map<string, Throughput[]>(implementations.map((i) => [i.name, []]));
  for (let rep = 0; rep < config.reps; rep++) {
    const order = implementations.map(
      (_, i) => implementations[(i + rep) % implementations.length],
    );
    // Every sequential block of the round, then every concurrent one: the blocks a ratio pairs
    // run one after the other, about a second apart.
    for (const impl of order) {
      progress(`scenario 1 rep ${rep + 1}/${config.reps}: ${impl.name}`);
      seqRuns
        .get(impl.name)!
        .push(
          await withCpu(admin, config.sequential, () =>
            sequential(impl.cycle, config.sequential, freshKey),
          ),
        );
    }
    for (const impl of order) {
      progress(`scenario 2 rep ${rep + 1}/${config.reps}: ${impl.name}`);
      concRuns
        .get(impl.name)!
        .push(
          await withCpu(admin, config.concurrent, () =>
            concurrent(impl.cycle, config.concurrent, config.workers, freshKey),
          ),
        );
    }
  }
  return {
    scenario1: summarize(seqRuns, implementations, names, config.reps),
    scenario2: summarize(concRuns, implementations, names, config.reps),
    seqRuns,
    concRuns,
  };
}

/** Medians over rounds; each ratio is the median of that ratio within a round (paired). */
function summarize(
  runs: Map<string, Throughput[]>,
  implementations: Implementation[],
  names: { floor: string; peers: string[] },
  reps: number,
): ThroughputRow[] {
  const rate = (name: string, round: number) => runs.get(name)![round].cyclesPerSec;
  const rounds = Array.from({ length: reps }, (_, round) => round);
  const pairedRatio = (name: string, to: (round: number) => number) =>
    median(rounds.map((round) => rate(name, round) / to(round)));
  const fastestPeer = (round: number) => Math.max(...names.peers.map((p) => rate(p, round)));
  return implementations.map(({ name }) => {
    const runsOf = runs.get(name)!;
    return {
      name,
      cyclesPerSec: median(runsOf.map((r) => r.cyclesPerSec)),
      ratio: pairedRatio(name, (round) => rate(implementations[0].name, round)),
      floorRatio: pairedRatio(name, (round) => rate(names.floor, round)),
      peerRatio: pairedRatio(name, fastestPeer),
      p50Us: median(runsOf.map((r) => r.p50Us)),
      p99Us: median(runsOf.map((r) => r.p99Us)),
      nodeCpuUs: median(runsOf.map((r) => r.nodeCpuUs!)),
      redisCpuUs: median(runsOf.map((r) => r.redisCpuUs!)),
    };
  });
}

/** The scenario 1 or 2 table (markdown). */
export function throughputTable(rows: ThroughputRow[]): string {
  return table(
    [
      'implementation',
      'cycles/s',
      'to floor',
      'to fastest peer',
      'to raw',
      'p50 µs',
      'p99 µs',
      'Node CPU µs/cycle',
      'Redis CPU µs/cycle',
    ],
    rows.map((r) => [
      r.name,
      fmt(r.cyclesPerSec),
      fmt(r.floorRatio, 2),
      fmt(r.peerRatio, 2),
      fmt(r.ratio, 2),
      fmt(r.p50Us),
      fmt(r.p99Us),
      fmt(r.nodeCpuUs, 1),
      fmt(r.redisCpuUs, 1),
    ]),
  );
}

/** Scenario 6: what @Locked costs over LockService.run, sequential and concurrent (fractions). */
export function lockedOverhead(
  scenario1: ThroughputRow[],
  scenario2: ThroughputRow[],
  names: { run: string; decorator: string },
): { sequentialOverhead: number; concurrentOverhead: number } {
  const rate = (rows: ThroughputRow[], name: string) =>
    rows.find((r) => r.name === name)!.cyclesPerSec;
  return {
    sequentialOverhead: rate(scenario1, names.run) / rate(scenario1, names.decorator) - 1,
    concurrentOverhead: rate(scenario2, names.run) / rate(scenario2, names.decorator) - 1,
  };
}

/** The scenario 6 table (markdown). */
export function overheadTable(
  overhead: { sequentialOverhead: number; concurrentOverhead: number },
  workers: number,
): string {
  return table(
    ['sequential', `${workers} concurrent`],
    [
      [
        `${fmt(overhead.sequentialOverhead * 100, 1)} %`,
        `${fmt(overhead.concurrentOverhead * 100, 1)} %`,
      ],
    ],
  );
}
