/**
 * Soak test: several processes take a few locks for a set time doing fenced GET-then-SET
 * critical sections (soak-worker.ts), optionally while the parent injects faults
 * (soak-faults.ts); the verdicts come from every section's and wait's times (soak-analysis.ts).
 *
 *   npm run soak -- --seconds 60 --processes 4 [--workers 2] [--keys 2] [--faults] [--durable]
 *
 * Prints a report and exits 1 on any violation (soakViolations). docs/reliability.md ("Soak")
 * says what each counter means.
 */
import { join } from 'node:path';
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { startRedis } from '../support/redis-server';
import { tcpProxy } from '../faults/fault-kit';
import { transpileWorker, type WorkerBuild } from '../../tools/transpile-worker';
import { checkExclusion, checkFencing, checkWaits } from './soak-analysis';
import { injectFaults } from './soak-faults';
import { monitorLocks } from './soak-monitor';
import {
  FAULT_KINDS,
  WAIT,
  type FaultKind,
  type SectionRecord,
  type SoakWorkerReport,
} from './soak-records';
import type { SoakWorkerSettings } from './soak-worker';

/** The watchdog lease of the soak, ms: short, so that faults outlast it. */
export const SOAK_LEASE = 1_000;
/** A wait spanning this long a stretch of free lock (away from faults) is stuck, µs. */
const STUCK_WINDOW = 1_000_000;
/** Time after a fault in which a waiter may still be kept from a free lock, µs (guarantee 12). */
const RECOVERY = 1_000_000;

export interface SoakOptions {
  seconds: number;
  processes: number;
  workers?: number;
  keys?: number;
  /** Inject Redis restarts, pauses, connection cuts and stalls. */
  faults?: boolean;
  /**
   * Run the lock's Redis with an append-only file flushed on every write, so a restart keeps
   * the locks (without it a restart wipes them: overlaps after a wipe are then expected).
   */
  durable?: boolean;
  /** Control run: the same sections without the lock (must report violations). */
  unlocked?: boolean;
  /** Sections each process completes at least, running past `seconds` if it must (see worker). */
  minSections?: number;
}

export interface SoakReport {
  processes: number;
  workersPerProcess: number;
  keys: number;
  seconds: number;
  /** The lock's Redis kept its data across restarts (--durable). */
  durable: boolean;
  faults: Record<FaultKind, number>;
  sections: number;
  sectionsPerSecond: number;
  violations: number;
  overlapsAfterWipe: number;
  staleTokens: number;
  staleAccepted: number;
  fenceRefusals: number;
  nestedMismatch: number;
  lostUpdates: number;
  lostTold: number;
  lostAtRelease: number;
  lostEvents: number;
  unreportedLosses: number;
  unhandledRejections: number;
  waits: number;
  waitTimeouts: number;
  waitFailures: number;
  stuckTimeouts: number;
  lateGrants: number;
  freeWindows: number;
  errors: number;
  hungCalls: number;
  samples: string[];
  perProcess: { sections: number; lost: number; unhandled: number; errors: number }[];
}

function spawnWorker(build: WorkerBuild, settings: SoakWorkerSettings) {
  const child = spawn(process.execPath, [build.entry, JSON.stringify(settings)], {
    stdio: ['pipe', 'pipe', 'inherit'],
    env: build.env,
  });
  let output = '';
  const ready = new Promise<void>((resolve, reject) => {
    child.stdout.on('data', (d: Buffer) => {
      output += d.toString();
      if (output.startsWith('ready\n')) resolve();
    });
    child.once('exit', (code) => reject(new Error(`soak worker exited ${code} before ready`)));
  });
  // 'close', not 'exit': the report may still be in the pipe when the process has exited.
  const done = new Promise<SoakWorkerReport>((resolve, reject) =>
    child.on('close', (code) =>
      code === 0
        ? resolve(JSON.parse(output.slice('ready\n'.length)) as SoakWorkerReport)
        : reject(new Error(`soak worker exited ${code}`)),
    ),
  );
  return { child, ready, done };
}

/** Seconds from the first call to the last exit of `records` (0 without any). */
function spanOf(records: SectionRecord[]): number {
  if (records.length === 0) return 0;
  const first = records.reduce((t, r) => Math.min(t, r[1]), Infinity);
  const last = records.reduce((t, r) => Math.max(t, r[3]), 0);
  return (last - first) / 1e6;
}

export async function runSoak(options: SoakOptions): Promise<SoakReport> {
  const workers = options.workers ?? 2;
  const keys = options.keys ?? 2;
  const lockRedis = await startRedis({ control: true, durable: options.durable });
  const storeRedis = await startRedis({ control: true });
  const proxy = options.faults ? await tcpProxy(lockRedis.port) : undefined;
  const prefix = `soak:${randomUUID()}`;
  const names = Array.from({ length: keys }, (_, k) => `${prefix}:${k}`);
  const settings: SoakWorkerSettings = {
    lockPort: proxy?.port ?? lockRedis.port,
    storePort: storeRedis.port,
    prefix,
    keys,
    seconds: options.seconds,
    minSections: options.minSections,
    workers,
    leaseTime: SOAK_LEASE,
    unlocked: options.unlocked,
  };
  const build = transpileWorker(join(__dirname, 'soak-worker.ts'));
  const children = Array.from({ length: options.processes }, () => spawnWorker(build, settings));
  // A worker that hangs (a stuck lock) must fail the soak, not hang it.
  const deadline = setTimeout(
    () => children.forEach(({ child }) => child.kill('SIGKILL')),
    (options.seconds + 180) * 1000, // startup on a busy machine, the end, 30 s to reach minSections, 30 s for hangs
  );
  const store = new Redis(storeRedis.url);
  let finished = false;
  try {
    await Promise.all(children.map((c) => c.ready));
    const startAt = Date.now() + 200;
    for (const { child } of children) child.stdin.end(String(startAt));
    const monitor = monitorLocks(lockRedis.port, names);
    const faulting = proxy
      ? injectFaults(lockRedis, proxy, startAt + options.seconds * 1000, () => finished)
      : Promise.resolve([]);
    const perProcess = await Promise.all(children.map((c) => c.done)).finally(
      () => (finished = true),
    );
    const faults = await faulting;
    const freeRuns = await monitor.stop();
    const counters = await Promise.all(names.map((n) => store.get(`${n}:counter`)));
    const counted = counters.reduce((total, c) => total + Number(c ?? 0), 0);
    const records = perProcess.flatMap((r) => r.records);
    const waits = perProcess.flatMap((r) => r.waits);
    const wipes = faults.filter((f) => f.kind === 'restart').map((f) => f.start);
    const exclusion = checkExclusion(records, wipes);
    const fencing = checkFencing(records);
    const stuck = checkWaits(waits, records, freeRuns, faults, STUCK_WINDOW, RECOVERY);
    const sum = (f: (r: SoakWorkerReport) => number) => perProcess.reduce((t, r) => t + f(r), 0);
    const lostTold = sum((r) => r.lostTold);
    const lostAtRelease = sum((r) => r.lostAtRelease);
    const lostEvents = sum((r) => r.lostEvents);
    const faultCounts = Object.fromEntries(
      FAULT_KINDS.map((kind) => [kind, faults.filter((f) => f.kind === kind).length]),
    ) as Record<FaultKind, number>;
    return {
      processes: options.processes,
      workersPerProcess: workers,
      keys,
      seconds: options.seconds,
      durable: options.durable === true,
      faults: faultCounts,
      sections: records.length,
      sectionsPerSecond: Math.round(records.length / Math.max(options.seconds, spanOf(records))),
      violations: exclusion.violations,
      overlapsAfterWipe: exclusion.overlapsAfterWipe,
      staleTokens: fencing.staleTokens,
      staleAccepted: fencing.staleAccepted,
      fenceRefusals: fencing.refused,
      nestedMismatch: sum((r) => r.nestedMismatch),
      lostUpdates: records.length - counted,
      lostTold,
      lostAtRelease,
      lostEvents,
      unreportedLosses: Math.max(0, lostTold + lostAtRelease - lostEvents),
      unhandledRejections: sum((r) => r.unhandledRejections),
      waits: waits.length,
      waitTimeouts: waits.filter((w) => w[3] === WAIT.timedOut).length,
      waitFailures: waits.filter((w) => w[3] === WAIT.failed).length,
      stuckTimeouts: stuck.stuckTimeouts,
      lateGrants: stuck.lateGrants,
      freeWindows: stuck.freeWindows,
      errors: sum((r) => r.errors),
      hungCalls: sum((r) => r.hungCalls),
      samples: [...exclusion.samples, ...perProcess.flatMap((r) => r.errorSamples)],
      perProcess: perProcess.map((r) => ({
        sections: r.sections,
        lost: r.lostTold + r.lostAtRelease,
        unhandled: r.unhandledRejections,
        errors: r.errors,
      })),
    };
  } finally {
    finished = true;
    clearTimeout(deadline);
    for (const { child } of children) if (child.exitCode === null) child.kill('SIGKILL');
    store.disconnect();
    await proxy?.close();
    await lockRedis.stop();
    await storeRedis.stop();
    build.remove();
  }
}

/** The violations, by name; empty when the soak kept every promise. */
export function soakViolations(r: SoakReport): string[] {
  const faultFree = Object.values(r.faults).every((n) => n === 0);
  const checks: [string, boolean][] = [
    ['exclusion violations', r.violations > 0],
    ['stale fencing tokens', r.staleTokens > 0],
    ['stale fencing tokens accepted', r.staleAccepted > 0],
    ['nested holds with another token', r.nestedMismatch > 0],
    ['losses not reported on lockLost$', r.unreportedLosses > 0],
    ['unhandled rejections', r.unhandledRejections > 0],
    ['stuck waiters', r.stuckTimeouts + r.lateGrants > 0],
    ['failed critical sections', r.errors > 0],
    ['calls that never settled', r.hungCalls > 0],
    ['no critical section at all', r.sections === 0],
  ];
  if (faultFree) {
    // Without faults nothing may be lost, refused or overlapping at all.
    checks.push(
      ['lost updates', r.lostUpdates !== 0],
      ['fenced writes refused', r.fenceRefusals > 0],
      ['locks lost', r.lostTold + r.lostAtRelease + r.lostEvents > 0],
      ['waits failed', r.waitFailures > 0],
      ['overlaps', r.overlapsAfterWipe > 0],
    );
  }
  return checks.filter(([, failed]) => failed).map(([name]) => name);
}

if (require.main === module) {
  const arg = (name: string, fallback: number) => {
    const index = process.argv.indexOf(`--${name}`);
    const value = index > 0 ? Number(process.argv[index + 1]) : fallback;
    if (!Number.isInteger(value) || value < 1) {
      console.error(`--${name} needs a whole number >= 1, got ${process.argv[index + 1]}`);
      process.exit(2);
    }
    return value;
  };
  runSoak({
    seconds: arg('seconds', 60),
    processes: arg('processes', 4),
    workers: arg('workers', 2),
    keys: arg('keys', 2),
    faults: process.argv.includes('--faults'),
    durable: process.argv.includes('--durable'),
  }).then(
    (report) => {
      const { perProcess, faults, samples, ...totals } = report;
      console.log('soak report');
      console.table({ ...totals, ...faults });
      console.table(perProcess);
      for (const sample of samples) console.log(`  ${sample}`);
      const violations = soakViolations(report);
      console.log(
        violations.length === 0 ? 'OK: no violation' : `FAILED: ${violations.join(', ')}`,
      );
      process.exit(violations.length === 0 ? 0 : 1);
    },
    (error: unknown) => {
      console.error(error);
      process.exit(1);
    },
  );
}
