/**
 * The lock-family rows of the benchmark (scenario 9 of bench/run.ts), on the redis-server
 * run.ts started: (a) read-heavy read-write lock against a plain lock, (b) fair lock against
 * plain lock across 4 processes, (c) 2-key multi-lock against two nested plain locks,
 * uncontended, (d) multi-locks taken in opposite orders across 4 processes, (e) a semaphore of
 * 4 permits and 16 workers in 4 processes. Cross-process runs share one pool of 4 worker
 * processes (family-pool.ts); repetitions are interleaved, the order alternating.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { NO_PERSISTENCE, spawnRedisServer } from '../../tools/redis/redis-process';
import { nestjsRedisLock } from '../lib/adapters';
import { FAIRNESS_WAIT, mergeLogs, type WorkerLog } from '../lib/fairness-loop';
import { familyTables } from './family-report';
import {
  FAIR_WORKERS,
  MULTI_CONCURRENCY,
  OPPOSITE_WORKERS,
  PERMITS,
  PROCESSES,
  RW_WORKERS,
  SEM_WORKERS,
  readHeavy,
  type FamilyJob,
} from '../lib/family-loops';
import { FamilyPool } from '../lib/family-pool';
import { FAMILY_CONFIG, type FamilyRuns, type SemaphoreRun } from './family-runs';
import { cycles, fmt } from '../lib/stats';
import { sleep } from '../../tools/time';

const mean = (values: number[]) => values.reduce((s, n) => s + n, 0) / values.length;
/**
 * Samples `keys` (GET of a count, or ZCARD of a sorted set, in one pipeline) from `startAt` for
 * `durationMs`, as often as one round trip allows: one array of values per key.
 */
async function sample(
  redis: Redis,
  keys: { get: string; zcard: string },
  startAt: number,
  durationMs: number,
) {
  await sleep(Math.max(0, startAt - Date.now()));
  const samples = { get: [] as number[], zcard: [] as number[] };
  while (Date.now() < startAt + durationMs) {
    const [get, zcard] = (await redis.pipeline().get(keys.get).zcard(keys.zcard).exec())!;
    samples.get.push(Number(get[1] ?? 0));
    samples.zcard.push(Number(zcard[1]));
    await sleep(1);
  }
  return samples;
}

/**
 * Runs every family scenario `config.reps` times (interleaved) on the server at `server`, and
 * returns the markdown, the exclusion violations and the raw runs.
 */
export async function familyScenario(
  quick: boolean,
  server: { url: string; port: number },
  admin: Redis,
  freshKey: (tag: string) => string,
  progress: (message: string) => void,
): Promise<{ markdown: string; violations: number; json: FamilyRuns }> {
  const config = quick ? FAMILY_CONFIG.quick : FAMILY_CONFIG.full;
  const started = Date.now();
  const lib = await nestjsRedisLock(server.url, { waitTime: FAIRNESS_WAIT });
  const pool = await FamilyPool.start(PROCESSES, server.port);
  progress(`family: ${PROCESSES} worker processes up in ${Date.now() - started} ms`);
  const runs: FamilyRuns = {
    config,
    readHeavy: { readWrite: [], plain: [] },
    fair: { fair: [], plain: [] },
    multi: {
      multi: { sequential: [], concurrent: [] },
      nested: { sequential: [], concurrent: [] },
    },
    opposite: [],
    semaphore: [],
  };
  const onPool: OnPool = async (job, workers, durationMs, keys, startAt) => {
    const { lock, second, state } = keys ?? {
      lock: freshKey(job),
      second: freshKey(`${job}-b`),
      state: freshKey(`${job}-s`),
    };
    const logs = await pool.run(
      (index) => ({ job, lock, second, state, workers, permits: PERMITS, durationMs, index }),
      startAt,
    );
    return { logs: logs.flat(), counter: Number((await admin.get(`${state}:counter`)) ?? 0) };
  };
  try {
    for (let rep = 0; rep < config.reps; rep++) {
      const flip = rep % 2 === 1;
      const tag = `family rep ${rep + 1}/${config.reps}`;
      for (const readWrite of flip ? [false, true] : [true, false]) {
        progress(`${tag}: read-heavy, ${readWrite ? 'read-write' : 'plain'} lock`);
        const keys = { lock: freshKey('rw'), state: freshKey('rw-s') };
        const result = await readHeavy(lib.locks, admin, keys, RW_WORKERS, config.rwMs, readWrite);
        runs.readHeavy[readWrite ? 'readWrite' : 'plain'].push(result);
      }
      for (const job of flip ? (['plain', 'fair'] as const) : (['fair', 'plain'] as const)) {
        progress(`${tag}: ${job} lock, ${PROCESSES} processes × ${FAIR_WORKERS} workers`);
        const before = await scriptCalls(admin);
        const { logs, counter } = await onPool(job, FAIR_WORKERS, config.fairMs);
        const calls = (await scriptCalls(admin)) - before;
        const merged = mergeLogs(logs, counter);
        runs.fair[job].push({ ...merged, scriptCallsPerSection: calls / merged.sections });
      }
      for (const variant of flip
        ? (['nested', 'multi'] as const)
        : (['multi', 'nested'] as const)) {
        progress(`${tag}: uncontended ${variant}`);
        const pair = () => [freshKey('m'), freshKey('m')] as const;
        const noop = () => Promise.resolve();
        const cycle = async () => {
          const [a, b] = pair();
          if (variant === 'multi') await lib.locks.run([a, b], noop);
          else await lib.locks.run(a, () => lib.locks.run(b, noop));
        };
        const before = await scriptCalls(admin);
        const sequential = await cycles(cycle, config.seq, 1);
        const calls = ((await scriptCalls(admin)) - before) / config.seq;
        runs.multi[variant].sequential.push({ ...sequential, scriptCalls: calls });
        runs.multi[variant].concurrent.push(await cycles(cycle, config.conc, MULTI_CONCURRENCY));
      }
      progress(`${tag}: opposite-order multi-locks, ${PROCESSES} × ${OPPOSITE_WORKERS} workers`);
      const opposite = await onPool('opposite', OPPOSITE_WORKERS, config.oppMs);
      runs.opposite.push(mergeLogs(opposite.logs, opposite.counter));
      progress(`${tag}: semaphore of ${PERMITS}, ${PROCESSES} × ${SEM_WORKERS} workers`);
      runs.semaphore.push(await semaphoreRun(onPool, admin, freshKey, config.semMs));
    }
  } finally {
    await pool.stop();
    await lib.run.close();
  }
  const violations =
    [...runs.readHeavy.readWrite, ...runs.readHeavy.plain].reduce((s, r) => s + r.violations, 0) +
    [...runs.fair.fair, ...runs.fair.plain, ...runs.opposite].reduce(
      (s, r) => s + r.violations,
      0,
    ) +
    runs.semaphore.reduce((s, r) => s + r.violations, 0);
  progress(`family: done in ${Date.now() - started} ms, ${violations} violations`);
  return { markdown: familyTables(runs), violations, json: runs };
}

/** EVALSHA calls so far (INFO commandstats). */
async function scriptCalls(redis: Redis): Promise<number> {
  return Number(/cmdstat_evalsha:calls=(\d+)/.exec(await redis.info('commandstats'))?.[1] ?? 0);
}

/** Runs `job` on the pool: `workers` per process, fresh keys; logs of every worker, counter. */
type OnPool = (
  job: FamilyJob,
  workers: number,
  durationMs: number,
  keys?: { lock: string; second: string; state: string },
  startAt?: number,
) => Promise<{ logs: WorkerLog[]; counter: number }>;

/**
 * The semaphore run: 16 workers in 4 processes; meanwhile this process samples the holders'
 * counter (INCR after the permit is taken, DECR before it is returned) with one GET at a time.
 */
async function semaphoreRun(
  onPool: OnPool,
  admin: Redis,
  freshKey: (tag: string) => string,
  durationMs: number,
): Promise<SemaphoreRun> {
  const keys = { lock: freshKey('sem'), second: freshKey('sem-b'), state: freshKey('sem-s') };
  const startAt = Date.now() + 200;
  // The permits' sorted set (docs/multi-lock-and-semaphore.md, "Redis layout"; no key prefix).
  const permits = { get: `${keys.state}:holders`, zcard: `{${keys.lock}}:timeout` };
  const sampling = sample(admin, permits, startAt, durationMs);
  const { logs } = await onPool('semaphore', SEM_WORKERS, durationMs, keys, startAt);
  const samples = await sampling;
  const entries = logs.flatMap((log) => log.values);
  return {
    sections: entries.length,
    perWorker: logs.map((log) => log.values.length),
    timeouts: logs.reduce((s, log) => s + log.timeouts, 0),
    violations: [...entries, ...samples.get, ...samples.zcard].filter((n) => n > PERMITS).length,
    maxAtEntry: Math.max(0, ...entries),
    meanInside: mean(samples.get),
    maxInside: Math.max(0, ...samples.get),
    meanHeld: mean(samples.zcard),
    maxHeld: Math.max(0, ...samples.zcard),
    samples: samples.get.length,
  };
}

/** `--family-only`: scenario 9 alone on a redis-server of its own; results/latest-family*.json. */
export async function familyOnly(
  quick: boolean,
  freshKey: (tag: string) => string,
  progress: (message: string) => void,
): Promise<void> {
  const started = Date.now();
  const load = loadavg().map((n) => n.toFixed(1));
  const server = await spawnRedisServer({ args: NO_PERSISTENCE });
  const admin = new Redis(server.url);
  const redisVersion = /redis_version:(\S+)/.exec(await admin.info('server'))![1];
  const result = await familyScenario(quick, server, admin, freshKey, progress);
  admin.disconnect();
  await server.stop();
  const machine = `${cpus()[0]?.model ?? 'unknown'}, ${cpus().length} cores; Node ${process.version}; Redis ${redisVersion}; load average ${load.join(' ')} before the run, ${loadavg()
    .map((n) => n.toFixed(1))
    .join(' ')} after; ${new Date().toISOString().slice(0, 10)}.`;
  process.stdout.write(
    `Machine: ${machine}\n\n${result.markdown}\nExclusion violations: ${result.violations}. Total time ${fmt((Date.now() - started) / 1000)} s.\n`,
  );
  const resultsDir = join(__dirname, '..', 'results');
  mkdirSync(resultsDir, { recursive: true });
  writeFileSync(
    join(resultsDir, quick ? 'latest-family-quick.json' : 'latest-family.json'),
    `${JSON.stringify({ date: new Date().toISOString(), quick, machine, scenarioFamily: result.json, violations: result.violations }, null, 2)}\n`,
  );
  process.exit(result.violations > 0 ? 1 : 0);
}
