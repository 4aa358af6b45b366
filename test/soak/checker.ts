/**
 * The family checker: a Jepsen-style run over every kind of hold. Worker processes
 * (checker-worker.ts) loop random plain, multi, write (with downgrades), read, fair and
 * semaphore sections on a few names while the injector (checker-faults.ts) stops and kills
 * workers and pauses, restarts, fails over and kills Redis; then checker-analysis.ts judges the
 * history. A phase on one Redis server, then one on a local 3-master Cluster.
 *
 *   npm run soak:check -- [--seconds 40] [--cluster-seconds 20] [--processes 4] [--workers 3]
 *                         [--no-faults]
 *
 * `--seconds 0` or `--cluster-seconds 0` skips that phase. Prints a report per phase and exits 1
 * on any violation (checkerViolations).
 */
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import type { Cluster, Redis } from 'ioredis';
import { startCluster, type TestCluster } from '../../tools/redis/cluster';
import { startRedis, type TestRedis } from '../support/redis-server';
import { transpileWorker } from '../../tools/transpile-worker';
import { checkExclusion, checkWaits, leftoverKeys } from './checker-analysis';
import { injectCheckerFaults, type FaultTarget } from './checker-faults';
import { monitorResources } from './checker-monitor';
import { CheckerPool } from './checker-pool';
import {
  CHECKER_FAULTS,
  CHECKER_RESOURCES,
  SEM,
  SEMAPHORE_PERMITS,
  type CheckerFault,
  type CheckerFaultKind,
} from './checker-records';

/** Watchdog lease and fair queue timeout of the workers, ms: short, so faults outlast them. */
export const CHECKER_LEASE = 1_000;
export const CHECKER_FAIR_QUEUE_TIMEOUT = 1_000;

/** One phase's settings. */
export interface CheckerOptions {
  topology: 'single' | 'cluster';
  seconds: number;
  processes: number;
  workers: number;
  faults: boolean;
}

/** One phase's findings and counts. */
export interface CheckerReport {
  topology: 'single' | 'cluster';
  seconds: number;
  sections: number;
  sectionsByMode: Record<string, number>;
  faults: Partial<Record<CheckerFaultKind, number>>;
  violations: number;
  violationsByResource: Record<number, number>;
  afterWriteLoss: number;
  thawActs: number;
  lostTold: number;
  lostAtRelease: number;
  waits: number;
  waitTimeouts: number;
  waitFailures: number;
  stuckTimeouts: number;
  lateGrants: number;
  stuckByResources: Record<string, number>;
  freeWindows: number;
  unhandledRejections: number;
  failedSections: number;
  workersKilled: number;
  workersCrashed: number;
  hungWorkers: number;
  leftoverKeys: string[];
  samples: string[];
}

/** Every key of the phase's Redis with its PTTL (masters only on a Cluster). */
async function keysWithTtl(nodes: Redis[]): Promise<{ key: string; pttl: number; size: number }[]> {
  const found: { key: string; pttl: number; size: number }[] = [];
  for (const node of nodes) {
    for (const key of await node.keys('*')) {
      const size = (await node.type(key)) === 'zset' ? await node.zcard(key) : 0;
      found.push({ key, pttl: await node.pttl(key), size });
    }
  }
  return found;
}

/** Runs one phase and analyses it. */
export async function runChecker(options: CheckerOptions): Promise<CheckerReport> {
  let redis: TestRedis | undefined;
  let cluster: TestCluster | undefined;
  let monitorClient: Redis | Cluster;
  let target: FaultTarget;
  if (options.topology === 'single') {
    redis = await startRedis({ control: true, durable: true });
    monitorClient = redis.client();
    target = { redis };
  } else {
    cluster = await startCluster({ masters: 3, replicasPerMaster: 1 });
    monitorClient = cluster.client();
    target = { cluster };
  }
  monitorClient.on('error', () => undefined);
  const prefix = `check:${randomUUID().slice(0, 8)}`;
  const settings = {
    redis: redis ? { port: redis.port } : { cluster: [...cluster!.ports] },
    prefix,
    endAt: 0, // the first workers boot before the clock starts (on a busy machine, seconds)
    workers: options.workers,
    leaseTime: CHECKER_LEASE,
    fairQueueTimeout: CHECKER_FAIR_QUEUE_TIMEOUT,
  };
  const build = transpileWorker(join(__dirname, 'checker-worker.ts'));
  let pool: CheckerPool | undefined;
  let finished = false;
  try {
    pool = new CheckerPool(build, settings);
    await pool.start(options.processes);
    const startAt = Date.now();
    const endAt = startAt + options.seconds * 1_000;
    pool.go(endAt);
    const monitor = monitorResources(monitorClient, prefix);
    const faulting = options.faults
      ? injectCheckerFaults(target, pool, CHECKER_LEASE, [2_500, 5_000], endAt, () => finished)
      : Promise.resolve<CheckerFault[]>([]);
    // The injector stops before the end, so no replacement is spawned after finish() starts.
    const faults = await faulting;
    const hungWorkers = await pool.finish(endAt - Date.now() + 60_000);
    finished = true;
    const free = await monitor.stop();
    const nodes = redis
      ? [monitorClient as Redis]
      : (await cluster!.masters()).map((p) => cluster!.admin.get(p));
    const semaphoreName = `${prefix}:${CHECKER_RESOURCES[SEM]}`;
    const leftovers = leftoverKeys(await keysWithTtl(nodes), semaphoreName, SEMAPHORE_PERMITS);
    const { records } = pool;
    const holds = [...records.holds.values()];
    const exclusion = checkExclusion(holds, faults);
    const window = CHECKER_FAIR_QUEUE_TIMEOUT * 1_000;
    // A fault keeps a waiter out for up to a lease (a lost holder's) plus the fair queue timeout
    // (a waiter ahead that could not renew its place). A frozen or killed process may leave a
    // dead place in the fair queue for each of its loops, and each keeps the queue up to the
    // fair queue timeout after its turn (docs/read-write-and-fair.md), one after another.
    const recovery = (fault: CheckerFault) =>
      (CHECKER_LEASE +
        (fault.process === undefined ? 1 : options.workers) * CHECKER_FAIR_QUEUE_TIMEOUT) *
      1_000;
    const stuck = checkWaits(records.waits, holds, free, faults, window, recovery);
    const count = <T>(items: T[], key: (item: T) => string) =>
      items.reduce<Record<string, number>>(
        (acc, item) => ((acc[key(item)] = (acc[key(item)] ?? 0) + 1), acc),
        {},
      );
    return {
      topology: options.topology,
      seconds: Math.round((Date.now() - startAt) / 1_000),
      sections: holds.length,
      sectionsByMode: count(holds, (h) =>
        h.resources.length > 1 ? 'multi' : `${h.mode}:${h.resources[0]}`,
      ),
      faults: count(faults, (f) => f.kind),
      violations: exclusion.violations,
      violationsByResource: exclusion.byResource,
      afterWriteLoss: exclusion.afterWriteLoss,
      thawActs: exclusion.thawActs,
      lostTold: holds.filter((h) => h.told !== 0).length,
      lostAtRelease: holds.filter((h) => h.told === 0 && h.outcome === 'lost').length,
      waits: records.waits.length,
      waitTimeouts: records.waits.filter((w) => w.outcome === 't').length,
      waitFailures: records.waits.filter((w) => w.outcome === 'f').length,
      stuckTimeouts: stuck.stuckTimeouts,
      lateGrants: stuck.lateGrants,
      stuckByResources: stuck.byResources,
      freeWindows: stuck.freeWindows,
      unhandledRejections: records.unhandled,
      failedSections: records.errors,
      workersKilled: records.killed,
      workersCrashed: records.crashed,
      hungWorkers,
      leftoverKeys: leftovers,
      samples: [...exclusion.samples, ...stuck.samples, ...records.samples],
    };
  } finally {
    finished = true;
    pool?.killAll();
    monitorClient.disconnect();
    await redis?.stop();
    await cluster?.stop();
    build.remove();
  }
}

/** The violations, by name; empty when the phase kept every promise. */
export function checkerViolations(r: CheckerReport): string[] {
  const checks: [string, boolean][] = [
    ['conflicting holds', r.violations > 0],
    ['stuck waits', r.stuckTimeouts + r.lateGrants > 0],
    ['unhandled rejections', r.unhandledRejections > 0],
    ['keys left without a TTL', r.leftoverKeys.length > 0],
    ['workers that crashed or hung', r.workersCrashed + r.hungWorkers > 0],
    ['no section at all', r.sections === 0],
  ];
  return checks.filter(([, failed]) => failed).map(([name]) => name);
}

function printReport(report: CheckerReport): string[] {
  const {
    samples,
    leftoverKeys: leftovers,
    sectionsByMode,
    faults,
    violationsByResource,
    stuckByResources,
    ...totals
  } = report;
  console.log(`\nfamily checker: ${report.topology}`);
  console.table(totals);
  console.log('sections by mode:resource', JSON.stringify(sectionsByMode));
  console.log(
    'faults',
    JSON.stringify(Object.fromEntries(CHECKER_FAULTS.map((k) => [k, faults[k] ?? 0]))),
  );
  console.log('violations by resource', JSON.stringify(violationsByResource));
  console.log('stuck waits by resources', JSON.stringify(stuckByResources));
  for (const key of leftovers.slice(0, 10)) console.log(`  left without a TTL: ${key}`);
  for (const sample of samples) console.log(`  ${sample}`);
  const violations = checkerViolations(report);
  console.log(violations.length === 0 ? 'OK: no violation' : `FAILED: ${violations.join(', ')}`);
  return violations;
}

if (require.main === module) {
  const arg = (name: string, fallback: number, min = 1) => {
    const index = process.argv.indexOf(`--${name}`);
    const value = index > 0 ? Number(process.argv[index + 1]) : fallback;
    if (!Number.isInteger(value) || value < min) {
      console.error(`--${name} needs a whole number >= ${min}, got ${process.argv[index + 1]}`);
      process.exit(2);
    }
    return value;
  };
  const common = {
    processes: arg('processes', 4),
    workers: arg('workers', 3),
    faults: !process.argv.includes('--no-faults'),
  };
  const phases: CheckerOptions[] = [
    { topology: 'single', seconds: arg('seconds', 40, 0), ...common },
    { topology: 'cluster', seconds: arg('cluster-seconds', 20, 0), ...common },
  ].filter((phase) => phase.seconds > 0) as CheckerOptions[];
  (async () => {
    let failed = false;
    for (const phase of phases) failed = printReport(await runChecker(phase)).length > 0 || failed;
    process.exit(failed ? 1 : 0);
  })().catch((error: unknown) => {
    console.error(error);
    process.exit(1);
  });
}
