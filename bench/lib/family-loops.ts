/**
 * The worker loops of the lock-family scenarios (family.ts), shared by this process and the
 * child processes of family-worker.ts. Every loop runs from `startAt` for `durationMs` and
 * checks exclusion itself: in-process counters and Redis counters (a section registers, then
 * reads the others' count, in one pipeline: of two overlapping sections, the later one's read
 * sees the earlier one's registration, in any process).
 */
import type { Redis } from 'ioredis';
import type { LockService } from '../../lib';
import { FAIRNESS_WAIT, counterLoop, type WorkerLog } from './fairness-loop';
import { sleep } from '../../tools/time';

/** The shapes of the family scenarios: processes, workers (per process), permits. */
export const PROCESSES = 4;
export const RW_WORKERS = 8;
export const FAIR_WORKERS = 2; // per process
export const OPPOSITE_WORKERS = 2; // per process
export const SEM_WORKERS = 4; // per process
export const PERMITS = 4;
export const MULTI_CONCURRENCY = 16;

/** The jobs a family worker process can run; each returns one WorkerLog per worker. */
export type FamilyJob = 'fair' | 'plain' | 'opposite' | 'semaphore';

/** Arguments of a family job (one JSON argv of family-worker.ts). */
export interface FamilyJobArgs {
  job: FamilyJob;
  /** Lock key(s) and the state key prefix. */
  lock: string;
  second: string;
  state: string;
  workers: number;
  permits: number;
  durationMs: number;
  /** This process's index among the job's processes. */
  index: number;
}

const waitUntil = (at: number) => sleep(Math.max(0, at - Date.now()));

/**
 * Runs `args.workers` workers of `args.job` on `locks`:
 * - fair / plain: fairness-loop.ts's counterLoop (GET then SET of a counter) on one key;
 * - opposite: the same on the multi-lock [lock, second], or [second, lock] for every other
 *   worker (by global index), so half the workers ask for the keys in the opposite order;
 * - semaphore: a permit of `permits`, then INCR of the holders' counter (its value: how many
 *   hold one now, this one included, logged as the section's value), then DECR.
 */
export async function runJob(
  locks: LockService,
  redis: Redis,
  args: FamilyJobArgs,
  startAt: number,
): Promise<WorkerLog[]> {
  const counter = `${args.state}:counter`;
  const workers = Array.from({ length: args.workers }, (_, w) => args.index * args.workers + w);
  if (args.job === 'semaphore') {
    const semaphore = locks.semaphore(args.lock, { permits: args.permits });
    return Promise.all(
      workers.map(() =>
        sectionLoop(args.durationMs, startAt, async (log) => {
          await semaphore.run(
            async () => {
              const holders = await redis
                .pipeline()
                .incr(`${args.state}:holders`)
                .get(counter)
                .exec();
              log.values.push(Number(holders![0][1]));
              await redis.decr(`${args.state}:holders`);
            },
            { waitTime: FAIRNESS_WAIT },
          );
        }),
      ),
    );
  }
  return Promise.all(
    workers.map((global) => {
      const keys =
        args.job !== 'opposite'
          ? args.lock
          : global % 2 === 0
            ? [args.lock, args.second]
            : [args.second, args.lock];
      const adapter = {
        name: args.job,
        locked: <T>(_key: string, fn: () => Promise<T>) =>
          locks.run(keys, fn, { fair: args.job === 'fair', waitTime: FAIRNESS_WAIT }),
        close: () => Promise.resolve(),
      };
      return counterLoop(adapter, redis, { lock: args.lock, counter }, args.durationMs, startAt);
    }),
  );
}

/** One worker looping `section` (which logs its value) and counting failed acquires. */
async function sectionLoop(
  durationMs: number,
  startAt: number,
  section: (log: WorkerLog) => Promise<void>,
): Promise<WorkerLog> {
  const log: WorkerLog = { values: [], began: [], ended: [], returned: [], timeouts: 0 };
  await waitUntil(startAt);
  const endAt = startAt + durationMs;
  while (Date.now() < endAt) {
    try {
      await section(log);
    } catch {
      log.timeouts++;
    }
  }
  return log;
}

/** What one read-heavy run measured. */
export interface ReadHeavyResult {
  reads: number;
  writes: number;
  perWorker: number[];
  timeouts: number;
  /** Sections that overlapped a writer, writes lost (counter mismatch). */
  violations: number;
  /** Most readers seen inside at once (in this process). */
  maxReaders: number;
}

/**
 * `workers` loops on the lock `keys.lock`, 9 sections in 10 reads, 1 a write (worker w writes
 * in iterations i with (i + w) % 10 == 9). `readWrite`: reads take `mode: 'read'`, writes
 * `mode: 'write'`; otherwise both take the plain lock. A read: INCR readers, GET writers, GET
 * data (one pipeline), then DECR readers. A write: INCR writers, GET readers, GET data, then
 * SET data + 1 and DECR writers. A writer that sees a reader or another writer, a reader that
 * sees a writer, or a final data counter that differs from the writes is a violation.
 */
export async function readHeavy(
  locks: LockService,
  redis: Redis,
  keys: { lock: string; state: string },
  workers: number,
  durationMs: number,
  readWrite: boolean,
): Promise<ReadHeavyResult> {
  const [readers, writers, data] = ['readers', 'writers', 'data'].map((k) => `${keys.state}:${k}`);
  const result: ReadHeavyResult = {
    reads: 0,
    writes: 0,
    perWorker: Array.from({ length: workers }, () => 0),
    timeouts: 0,
    violations: 0,
    maxReaders: 0,
  };
  const inside = { readers: 0, writers: 0 };
  const read = async () => {
    inside.readers++;
    result.maxReaders = Math.max(result.maxReaders, inside.readers);
    try {
      if (inside.writers > 0) result.violations++;
      const seen = await redis.pipeline().incr(readers).get(writers).get(data).exec();
      if (Number(seen![1][1] ?? 0) > 0) result.violations++;
      await redis.decr(readers);
    } finally {
      inside.readers--;
    }
  };
  const write = async () => {
    inside.writers++;
    try {
      if (inside.writers > 1 || inside.readers > 0) result.violations++;
      const seen = await redis.pipeline().incr(writers).get(readers).get(data).exec();
      if (Number(seen![0][1]) !== 1 || Number(seen![1][1] ?? 0) > 0) result.violations++;
      await redis
        .pipeline()
        .set(data, Number(seen![2][1] ?? 0) + 1)
        .decr(writers)
        .exec();
    } finally {
      inside.writers--;
    }
  };
  const endAt = Date.now() + durationMs;
  await Promise.all(
    Array.from({ length: workers }, async (_, w) => {
      for (let i = 0; Date.now() < endAt; i++) {
        const writing = (i + w) % 10 === 9;
        const mode = readWrite ? (writing ? 'write' : 'read') : undefined;
        try {
          await locks.run(keys.lock, writing ? write : read, { mode, waitTime: FAIRNESS_WAIT });
        } catch {
          result.timeouts++;
          continue;
        }
        if (writing) result.writes++;
        else result.reads++;
        result.perWorker[w]++;
      }
    }),
  );
  result.violations += Math.abs(Number((await redis.get(data)) ?? 0) - result.writes);
  return result;
}
