import type { Redis } from 'ioredis';
import {
  childProcesses,
  inProcessClients,
  mergeLogs,
  type FairnessResult,
  type FairnessTag,
} from '../lib/fairness-loop';
import { fmt, median, table } from '../lib/stats';

/**
 * The fairness shapes, one worker per client: clients in processes or in one process, the
 * outside-harness shape (processes on the built package, each starting when it is ready),
 * processes that want the lock in bursts (BURSTS), pausing while the others go on, and two
 * processes (a round of two hand-offs, shorter than a fixed hold-back).
 */
const SHAPES = [
  '8 processes × 1 worker',
  '8 clients in 1 process × 1 worker',
  '8 processes, outside-harness shape',
  '8 processes in bursts of 20, 30 ms apart',
  '2 processes × 1 worker',
] as const;
/** The bursts shape: 20 sections in a row, then 30 ms without the lock (a turn or so of the others). */
const BURSTS = { sections: 20, pauseMs: 30 };
/** Shapes run for this library and redis-semaphore only (the outside harness compared those). */
const PAIR_SHAPES: readonly string[] = [SHAPES[2], SHAPES[3], SHAPES[4]];
const WORKERS = 8;
/** The outside harness's loop, ms: each worker loops this long from when it is ready, in every mode. */
const OUTSIDE_MS = 5_000;

/** One row of the fairness table: medians over the repetitions of one shape and contender. */
export interface FairnessRow {
  shape: string;
  name: string;
  ownerChangesPerSec: number;
  sectionsPerSec: number;
  minMax: number;
  /** The same while every worker was looping (see FairnessResult.allRunningMinMax). */
  allRunningMinMax: number;
  timeouts: number;
  violations: number;
  handoffUs: number;
  releaseUs: number;
  sectionUs: number;
  waitMs: number;
  waitP99Ms: number;
  /** This library: script calls (acquire attempts and releases) per section. */
  scriptCallsPerSection?: number;
  reps: (FairnessResult & { scriptCalls: number })[];
}

/**
 * Runs both shapes for every contender, `reps` interleaved repetitions of `durationMs` each,
 * every worker looping `locked(key, GET then SET counter + 1)` on one key.
 */
export async function fairnessScenario(
  contenders: readonly { name: string; tag: FairnessTag }[],
  server: { url: string; port: number },
  admin: Redis,
  options: { durationMs: number; reps: number; freshKey: (tag: string) => string },
  progress: (message: string) => void,
): Promise<FairnessRow[]> {
  const results = new Map<string, (FairnessResult & { scriptCalls: number })[]>();
  for (let rep = 0; rep < options.reps; rep++) {
    for (const shape of SHAPES) {
      for (let i = 0; i < contenders.length; i++) {
        const contender = contenders[(i + rep) % contenders.length];
        if (
          PAIR_SHAPES.includes(shape) &&
          contender.tag !== 'lib' &&
          contender.tag !== 'semaphore'
        ) {
          continue;
        }
        progress(`fairness ${shape} rep ${rep + 1}/${options.reps}: ${contender.name}`);
        const keys = { lock: options.freshKey('fair'), counter: options.freshKey('fair-counter') };
        const before = await scriptCalls(admin);
        const processes = (
          durationMs: number,
          mode?: Parameters<typeof childProcesses>[5],
          workers = WORKERS,
        ) => childProcesses(contender.tag, server.port, keys, workers, durationMs, mode);
        const logs =
          shape === SHAPES[0]
            ? await processes(options.durationMs)
            : shape === SHAPES[1]
              ? await inProcessClients(
                  contender.tag,
                  server.url,
                  admin,
                  keys,
                  WORKERS,
                  options.durationMs,
                )
              : shape === SHAPES[2]
                ? await processes(OUTSIDE_MS, { outside: true })
                : shape === SHAPES[3]
                  ? await processes(options.durationMs, { bursts: BURSTS })
                  : await processes(options.durationMs, {}, 2);
        const calls = (await scriptCalls(admin)) - before;
        const result = mergeLogs(logs, Number((await admin.get(keys.counter)) ?? 0));
        const id = `${shape}|${contender.name}`;
        results.set(id, [...(results.get(id) ?? []), { ...result, scriptCalls: calls }]);
      }
    }
  }
  return SHAPES.flatMap((shape) =>
    contenders.flatMap(({ name, tag }) => {
      const reps = results.get(`${shape}|${name}`);
      if (!reps) return [];
      const seconds = (shape === SHAPES[2] ? OUTSIDE_MS : options.durationMs) / 1000;
      return {
        shape,
        name,
        ownerChangesPerSec: median(reps.map((r) => r.ownerChanges / seconds)),
        sectionsPerSec: median(reps.map((r) => r.sections / seconds)),
        minMax: median(reps.map((r) => Math.min(...r.perWorker) / Math.max(...r.perWorker))),
        allRunningMinMax: median(reps.map((r) => r.allRunningMinMax)),
        timeouts: reps.reduce((sum, r) => sum + r.timeouts, 0),
        violations: reps.reduce((sum, r) => sum + r.violations, 0),
        handoffUs: median(reps.map((r) => r.handoffUs)),
        releaseUs: median(reps.map((r) => r.releaseUs)),
        sectionUs: median(reps.map((r) => r.sectionUs)),
        waitMs: median(reps.map((r) => r.waitMs)),
        waitP99Ms: median(reps.map((r) => r.waitP99Ms)),
        scriptCallsPerSection:
          tag === 'lib' ? median(reps.map((r) => r.scriptCalls / r.sections)) : undefined,
        reps,
      };
    }),
  );
}

/** The fairness table (markdown). */
export function fairnessTable(rows: FairnessRow[]): string {
  return table(
    [
      'shape',
      'implementation',
      'owner changes/s',
      'sections/s',
      'worker min/max',
      'min/max, all running',
      'timeouts',
      'violations',
      'handoff µs',
      'release µs',
      'section µs',
      'wait p50 / p99 ms',
      'script calls per section',
    ],
    rows.map((r) => [
      r.shape,
      r.name,
      fmt(r.ownerChangesPerSec),
      fmt(r.sectionsPerSec),
      fmt(r.minMax, 2),
      fmt(r.allRunningMinMax, 2),
      r.timeouts,
      r.violations,
      fmt(r.handoffUs),
      fmt(r.releaseUs),
      fmt(r.sectionUs),
      `${fmt(r.waitMs, 1)} / ${fmt(r.waitP99Ms, 1)}`,
      r.scriptCallsPerSection === undefined ? '' : fmt(r.scriptCallsPerSection, 2),
    ]),
  );
}

async function scriptCalls(redis: Redis): Promise<number> {
  const info = await redis.info('commandstats');
  return Number(/cmdstat_evalsha:calls=(\d+)/.exec(info)?.[1] ?? 0);
}
