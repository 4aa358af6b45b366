import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { nestjsRedisLock, redisSemaphore, redlock, type Adapter } from './adapters';
import { handoffFloor, type RingPlace } from './handoff-floor';
import { median, percentile } from './stats';
import { runWorkerProcesses } from './worker-processes';
import { sleep } from '../../tools/time';

/** How long a fairness worker waits for the lock before its acquire counts as a timeout, ms. */
export const FAIRNESS_WAIT = 10_000;

/** What one worker of a fairness run saw: the counter value read in each of its sections. */
export interface WorkerLog {
  values: number[];
  /**
   * Per section, wall-clock ms (µs precision): run() was called (where the loop logs it), the
   * function began, ended, run() returned.
   */
  called?: number[];
  began: number[];
  ended: number[];
  returned: number[];
  timeouts: number;
}

/** One fairness run, merged over its workers. */
export interface FairnessResult {
  sections: number;
  ownerChanges: number;
  perWorker: number[];
  timeouts: number;
  /** Sections that read a value another section also read, or updates the counter lost. */
  violations: number;
  /** Medians over owner changes, µs: from the previous section's end to the next one's start. */
  handoffUs: number;
  /** ... of which the releasing worker's release (its run() returning after the section). */
  releaseUs: number;
  /** Median duration of a section (GET + SET), µs. */
  sectionUs: number;
  /** Median and 99th percentile over sections of the wait (run() called to the function begun), ms. */
  waitMs: number;
  waitP99Ms: number;
  /**
   * Per-worker min/max of the sections begun while every worker was looping (from the last
   * worker's first call to the first worker's last section): without the skew of workers that
   * start or stop apart (the outside-harness shape), which the lock cannot even out.
   */
  allRunningMinMax: number;
}

/** Wall-clock ms with sub-ms precision, comparable across processes on one machine. */
const clockMs = () => performance.timeOrigin + performance.now();

/**
 * The lock implementations a fairness run can use, by the tag a child process gets; `floor-all`
 * and `floor-next` are the hand-off floors (handoff-floor.ts).
 */
export type FairnessTag = 'lib' | 'semaphore' | 'redlock' | 'floor-all' | 'floor-next';

/** One client of `tag` on `url`, with its own connections (and, for this library, its own Nest app). */
export async function fairnessClient(
  tag: FairnessTag,
  url: string,
  place: RingPlace,
): Promise<Adapter> {
  if (tag === 'lib') return (await nestjsRedisLock(url, { waitTime: FAIRNESS_WAIT })).run;
  if (tag === 'floor-all' || tag === 'floor-next') {
    return handoffFloor(url, tag === 'floor-all' ? 'all' : 'next', place);
  }
  const client = new Redis(url);
  const adapter = tag === 'semaphore' ? redisSemaphore(client) : redlock(client, false);
  return { ...adapter, close: () => Promise.resolve(client.disconnect()) };
}

/**
 * A worker that wants the lock in bursts: `sections` in a row, then `pauseMs` without it (its
 * client stays up, as a service between requests).
 */
export interface Bursts {
  sections: number;
  pauseMs: number;
}

/**
 * One worker: from `startAt` for `durationMs`, loops `locked(lock, GET counter then SET it + 1)`
 * (in `bursts` when given) and logs each value read. A failed acquire (timeout) is counted and
 * the loop goes on.
 */
export async function counterLoop(
  adapter: Adapter,
  redis: Redis,
  keys: { lock: string; counter: string },
  durationMs: number,
  startAt: number,
  bursts?: Bursts,
): Promise<WorkerLog> {
  const log: WorkerLog = {
    values: [],
    called: [],
    began: [],
    ended: [],
    returned: [],
    timeouts: 0,
  };
  await sleep(Math.max(0, startAt - Date.now()));
  const endAt = startAt + durationMs;
  for (let done = 1; Date.now() < endAt; done++) {
    if (bursts && done % (bursts.sections + 1) === 0) {
      await sleep(bursts.pauseMs);
      continue;
    }
    const called = clockMs();
    try {
      await adapter.locked(keys.lock, async () => {
        log.called!.push(called);
        log.began.push(clockMs());
        const value = Number((await redis.get(keys.counter)) ?? 0);
        await redis.set(keys.counter, value + 1);
        log.values.push(value);
        log.ended.push(clockMs());
      });
      log.returned.push(clockMs());
    } catch {
      log.timeouts++;
    }
  }
  return log;
}

/**
 * Merges the workers' logs: sorted by the value each section read, the sections form the
 * lock's history (when exclusion held, every value 0..n-1 once); an owner change is a section
 * whose predecessor ran on another worker. `counter` is the counter's final value.
 */
export function mergeLogs(logs: WorkerLog[], counter: number): FairnessResult {
  const history = logs
    .flatMap((log, worker) =>
      log.values.map((value, i) => ({
        value,
        worker,
        began: log.began[i],
        ended: log.ended[i],
        returned: log.returned[i] ?? Number.NaN,
      })),
    )
    .sort((a, b) => a.value - b.value);
  let ownerChanges = 0;
  let repeated = 0;
  const handoffs: number[] = [];
  const releases: number[] = [];
  for (let i = 1; i < history.length; i++) {
    const [before, after] = [history[i - 1], history[i]];
    if (after.value === before.value) repeated++;
    if (after.worker === before.worker) continue;
    ownerChanges++;
    handoffs.push((after.began - before.ended) * 1e3);
    if (!Number.isNaN(before.returned)) releases.push((before.returned - before.ended) * 1e3);
  }
  const sections = history.length;
  const waits = logs.flatMap(({ called, began }) =>
    called ? began.map((time, i) => time - called[i]) : [],
  );
  const from = Math.max(...logs.map((log) => (log.called ?? log.began)[0] ?? Infinity));
  const to = Math.min(...logs.map((log) => log.ended.at(-1) ?? -Infinity));
  const inside = logs.map((log) => log.began.filter((time) => time >= from && time <= to).length);
  return {
    sections,
    ownerChanges,
    perWorker: logs.map((log) => log.values.length),
    timeouts: logs.reduce((sum, log) => sum + log.timeouts, 0),
    violations: Math.max(repeated, Math.abs(sections - counter)),
    handoffUs: median(handoffs),
    releaseUs: median(releases),
    sectionUs: median(history.map((h) => (h.ended - h.began) * 1e3)),
    waitMs: median(waits),
    waitP99Ms: percentile(waits, 99),
    allRunningMinMax: Math.max(...inside) > 0 ? Math.min(...inside) / Math.max(...inside) : 0,
  };
}

/** (b) `workers` independent clients of `tag` in this process, one worker each. */
export async function inProcessClients(
  tag: FairnessTag,
  url: string,
  state: Redis,
  keys: { lock: string; counter: string },
  workers: number,
  durationMs: number,
): Promise<WorkerLog[]> {
  const clients = await Promise.all(
    Array.from({ length: workers }, (_, index) =>
      fairnessClient(tag, url, { lock: keys.lock, index, count: workers }),
    ),
  );
  const startAt = Date.now() + 100;
  try {
    return await Promise.all(
      clients.map((client) => counterLoop(client, state, keys, durationMs, startAt)),
    );
  } finally {
    await Promise.all(clients.map((client) => client.close()));
  }
}

/**
 * `workers` child processes of `tag`, one worker each: (a) through ts-node, all starting at the
 * same time once every one is ready (looping in `bursts` when given); or (c), `outside`, the outside-harness shape: plain Node
 * processes (no ts-node) on the built package (`dist/`), each looping from the moment its client
 * is ready, with no shared start and no warm-up (workers/outside-worker.cjs).
 */
export async function childProcesses(
  tag: FairnessTag,
  port: number,
  keys: { lock: string; counter: string },
  workers: number,
  durationMs: number,
  mode: { outside?: boolean; bursts?: Bursts } = {},
): Promise<WorkerLog[]> {
  const args = [tag, String(port), keys.lock, keys.counter, String(durationMs)];
  if (!mode.outside) {
    const { bursts } = mode;
    return runWorkerProcesses<WorkerLog>('fairness-worker.ts', workers, (index) => [
      ...args,
      String(index),
      String(workers),
      ...(bursts ? [String(bursts.sections), String(bursts.pauseMs)] : []),
    ]);
  }
  const script = join(__dirname, '..', 'workers', 'outside-worker.cjs');
  return Promise.all(
    Array.from(
      { length: workers },
      () =>
        new Promise<WorkerLog>((resolve, reject) => {
          const child = spawn(process.execPath, [script, ...args], {
            stdio: ['ignore', 'pipe', 'inherit'],
          });
          let output = '';
          child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
          child.on('exit', (code) =>
            code === 0
              ? resolve(JSON.parse(output) as WorkerLog)
              : reject(new Error(`outside-worker.cjs exited ${code}`)),
          );
        }),
    ),
  );
}
