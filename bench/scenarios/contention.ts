/**
 * Scenario 3 of bench/run.ts: 8 workers on one key, in one process (lib/contend.ts) and as
 * 4 child processes × 2 workers (contention-worker.ts), checked for exclusion violations.
 */
import type { Redis } from 'ioredis';
import type { Adapter } from '../lib/adapters';
import { contend, type ContentionResult } from '../lib/contend';
import { commandStats } from '../lib/redis-info';
import { fmt, median, percentile, table } from '../lib/stats';
import { runWorkerProcesses } from '../lib/worker-processes';

/** The two contention shapes. */
const MODES = ['1 process × 8 workers', '4 processes × 2 workers'] as const;

/** One contender: its name, its tag for contention-worker.ts and its adapter in this process. */
export interface Contender {
  name: string;
  tag: string;
  adapter: Adapter;
}

/** One repetition: the run, the final counter and for this library the acquire attempts. */
type ContentionRep = ContentionResult & { counter: number; attemptsPerRelease?: number };

/** One row of the scenario 3 table: medians over the repetitions of one mode and contender. */
export interface ContentionRow {
  mode: string;
  name: string;
  sectionsPerSec: number;
  handoffsPerSec: number;
  p50WaitUs: number;
  p99WaitUs: number;
  minMax: number;
  violations: number;
  /** This library: script calls that were not releases, per release. */
  attemptsPerRelease?: number;
  reps: Omit<ContentionRep, 'waitsUs'>[];
}

/**
 * Runs both modes for every contender, `reps` repetitions of `durationMs` each on a new key.
 * A final counter that differs from the number of sections counts as violations.
 */
export async function contentionScenario(
  contenders: Contender[],
  server: { port: number },
  admin: Redis,
  stateClient: Redis,
  options: { durationMs: number; reps: number; freshKey: (tag: string) => string },
  progress: (message: string) => void,
): Promise<ContentionRow[]> {
  const rows: ContentionRow[] = [];
  for (const mode of MODES) {
    for (const contender of contenders) {
      const reps: ContentionRep[] = [];
      for (let rep = 0; rep < options.reps; rep++) {
        progress(`scenario 3 ${mode} rep ${rep + 1}: ${contender.name}`);
        const keys = { lock: options.freshKey('contended'), state: options.freshKey('state') };
        const before = await commandStats(admin);
        const result =
          mode === MODES[0]
            ? await contend(
                contender.adapter,
                stateClient,
                keys,
                Array.from({ length: 8 }, (_, i) => `w${i}`),
                options.durationMs,
              )
            : await childContention(contender.tag, server.port, keys, options.durationMs);
        const after = await commandStats(admin);
        const counter = Number((await admin.get(`${keys.state}:counter`)) ?? 0);
        const lost = result.sections - counter;
        const evalsha = (after.evalsha ?? 0) - (before.evalsha ?? 0);
        reps.push({
          ...result,
          violations: result.violations + Math.abs(lost),
          counter,
          // This library: every script call is an acquire attempt or a release (renewals are rare at a 30 s lease).
          attemptsPerRelease:
            contender.tag === 'lib' ? (evalsha - result.sections) / result.sections : undefined,
        });
      }
      const seconds = options.durationMs / 1000;
      rows.push({
        mode,
        name: contender.name,
        sectionsPerSec: median(reps.map((r) => r.sections / seconds)),
        handoffsPerSec: median(reps.map((r) => r.handoffs / seconds)),
        p50WaitUs: median(reps.map((r) => percentile(r.waitsUs, 50))),
        p99WaitUs: median(reps.map((r) => percentile(r.waitsUs, 99))),
        minMax: median(reps.map((r) => Math.min(...r.perWorker) / Math.max(...r.perWorker))),
        violations: reps.reduce((sum, r) => sum + r.violations, 0),
        attemptsPerRelease:
          contender.tag === 'lib' ? median(reps.map((r) => r.attemptsPerRelease!)) : undefined,
        reps: reps.map(({ waitsUs: _w, ...rest }) => rest),
      });
    }
  }
  return rows;
}

/** 4 child processes × 2 workers on one key (contention-worker.ts), their results merged. */
function childContention(
  tag: string,
  port: number,
  keys: { lock: string; state: string },
  durationMs: number,
): Promise<ContentionResult> {
  return runWorkerProcesses<ContentionResult>('contention-worker.ts', 4, (index) => [
    tag,
    String(port),
    keys.lock,
    keys.state,
    '2',
    String(durationMs),
    String(index),
  ]).then((results) => ({
    sections: results.reduce((s, r) => s + r.sections, 0),
    handoffs: results.reduce((s, r) => s + r.handoffs, 0),
    violations: results.reduce((s, r) => s + r.violations, 0),
    perWorker: results.flatMap((r) => r.perWorker),
    waitsUs: results.flatMap((r) => r.waitsUs),
  }));
}

/** The scenario 3 table (markdown). */
export function contentionTable(rows: ContentionRow[]): string {
  return table(
    [
      'mode',
      'implementation',
      'sections/s',
      'handoffs/s',
      'p50 wait µs',
      'p99 wait µs',
      'worker min/max',
      'violations',
      'acquire attempts per release',
    ],
    rows.map((r) => [
      r.mode,
      r.name,
      fmt(r.sectionsPerSec),
      fmt(r.handoffsPerSec),
      fmt(r.p50WaitUs),
      fmt(r.p99WaitUs),
      fmt(r.minMax, 2),
      r.violations,
      r.attemptsPerRelease === undefined ? '' : fmt(r.attemptsPerRelease, 2),
    ]),
  );
}
