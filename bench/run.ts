/**
 * The benchmark: this library against the raw Redis round-trip limit and its Node peers, on a
 * redis-server of its own. `npm run bench` (full, a few minutes) or `npm run bench -- --quick`.
 * Progress goes to stderr, markdown tables to stdout, every repetition to results/latest.json.
 * Exits 1 if any contention run saw an exclusion violation (CI runs --quick for that).
 * The Redis Cluster rows (cluster.ts) run last; `--no-cluster` skips them, `--cluster-only`
 * runs only them. The lock-family rows (family.ts: read-write, fair, multi-lock, semaphore) run
 * on the same server after scenario 7; `--no-family` skips them, `--family-only` runs only them.
 */
import 'reflect-metadata';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { NO_PERSISTENCE, spawnRedisServer } from '../tools/redis/redis-process';
import { nestjsRedisLock, protocolFloor, redisSemaphore, redlock, type Adapter } from './adapters';
import { clusterScenario } from './cluster';
import { contend, type ContentionResult } from './contention';
import { fairnessScenario, fairnessTable } from './fairness-scenario';
import { familyOnly, familyScenario } from './family';
import { fmt, median, nowUs, percentile, table } from './stats';
import { runWorkerProcesses } from './worker-processes';

const quick = process.argv.includes('--quick');
const clusterRows = !process.argv.includes('--no-cluster');
const familyRows = !process.argv.includes('--no-family');
const config = quick
  ? {
      reps: 2,
      sequential: 1_000,
      concurrent: 3_000,
      workers: 64,
      contendReps: 1,
      contendMs: 1_000,
      fairReps: 1,
      fairMs: 1_000,
      reentrant: 20_000,
      held: 10_000,
      lease: 1_500,
      periods: 2,
    }
  : {
      reps: 10,
      sequential: 2_000,
      concurrent: 10_000,
      workers: 64,
      contendReps: 2,
      contendMs: 3_000,
      fairReps: 2,
      fairMs: 5_000,
      reentrant: 200_000,
      held: 10_000,
      lease: 3_000,
      periods: 3,
    };

const progress = (message: string) => process.stderr.write(`[bench] ${message}\n`);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
let keySeq = 0;
const freshKey = (tag: string) => `bench:${tag}:${++keySeq}`;

interface Throughput {
  cyclesPerSec: number;
  p50Us: number;
  p99Us: number;
  /** CPU time of this (benchmark) process per cycle, µs: the client side of the cost. */
  nodeCpuUs?: number;
  /** CPU time of redis-server per cycle, µs (INFO cpu): the server side of the cost. */
  redisCpuUs?: number;
}

async function redisCpuUs(redis: Redis): Promise<number> {
  const info = await redis.info('cpu');
  const field = (name: string) => Number(new RegExp(`${name}:([\\d.]+)`).exec(info)![1]);
  return (field('used_cpu_sys') + field('used_cpu_user')) * 1e6;
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

async function sequential(run: (key: string) => Promise<unknown>, n: number): Promise<Throughput> {
  const latencies: number[] = [];
  const started = nowUs();
  for (let i = 0; i < n; i++) {
    const t = nowUs();
    await run(freshKey('s'));
    latencies.push(nowUs() - t);
  }
  return {
    cyclesPerSec: n / ((nowUs() - started) / 1e6),
    p50Us: percentile(latencies, 50),
    p99Us: percentile(latencies, 99),
  };
}

async function concurrent(
  run: (key: string) => Promise<unknown>,
  n: number,
  workers: number,
): Promise<Throughput> {
  const latencies: number[] = [];
  let next = 0;
  const started = nowUs();
  await Promise.all(
    Array.from({ length: workers }, async () => {
      while (next++ < n) {
        const t = nowUs();
        await run(freshKey('c'));
        latencies.push(nowUs() - t);
      }
    }),
  );
  return {
    cyclesPerSec: n / ((nowUs() - started) / 1e6),
    p50Us: percentile(latencies, 50),
    p99Us: percentile(latencies, 99),
  };
}

async function commandStats(redis: Redis): Promise<Record<string, number>> {
  const info = await redis.info('commandstats');
  const calls: Record<string, number> = {};
  for (const match of info.matchAll(/cmdstat_([\w|]+):calls=(\d+)/g))
    calls[match[1]] = Number(match[2]);
  return calls;
}

async function totalCommands(redis: Redis): Promise<number> {
  return Number(/total_commands_processed:(\d+)/.exec(await redis.info('stats'))![1]);
}

function packageVersion(name: string): string {
  const file = join(process.cwd(), 'node_modules', name, 'package.json');
  return (JSON.parse(readFileSync(file, 'utf8')) as { version: string }).version;
}

function gc() {
  (globalThis as { gc?: () => void }).gc?.();
}

async function main() {
  const started = Date.now();
  if (process.argv.includes('--cluster-only')) {
    const result = await clusterScenario(quick, progress);
    process.stdout.write(`${result.markdown}\nExclusion violations: ${result.violations}.\n`);
    process.exit(result.violations > 0 ? 1 : 0);
  }
  if (process.argv.includes('--family-only')) return familyOnly(quick, freshKey, progress);
  const server = await spawnRedisServer({ args: NO_PERSISTENCE });
  const newClient = () => new Redis(server.url);
  const admin = newClient();
  const redisVersion = /redis_version:(\S+)/.exec(await admin.info('server'))![1];
  const versions = Object.fromEntries(
    ['ioredis', '@nestjs/core', 'redis-semaphore', '@sesamecare-oss/redlock', 'typescript'].map(
      (name) => [name, packageVersion(name)],
    ),
  );
  const machine = {
    cpu: cpus()[0]?.model ?? 'unknown',
    cores: cpus().length,
    memoryGiB: Math.round(totalmem() / 2 ** 30),
    node: process.version,
    redis: redisVersion,
    platform: `${process.platform} ${process.arch}`,
  };
  progress(
    `redis-server ${redisVersion} on ${server.url} (pid-controlled), ${quick ? 'quick' : 'full'} mode`,
  );

  const rawClient = newClient();
  const trivial = (await rawClient.script('LOAD', 'return 1')) as string;
  const semaphoreClient = newClient();
  const redlockClient = newClient();
  const floorClient = newClient();
  const lib = await nestjsRedisLock(server.url);
  // What the fencing token costs on distinct keys (a new counter key per name).
  const fenced = await nestjsRedisLock(server.url, { fencing: true });
  const noop = () => Promise.resolve();
  const peers = [redisSemaphore(semaphoreClient), redlock(redlockClient)];
  const implementations: { name: string; cycle: (key: string) => Promise<unknown> }[] = [
    {
      name: 'raw limit (2 × EVALSHA)',
      cycle: async (key) => {
        await rawClient.evalsha(trivial, 1, key);
        await rawClient.evalsha(trivial, 1, key);
      },
    },
    ...[await protocolFloor(floorClient), lib.run, lib.decorator, fenced.run, ...peers].map(
      (adapter: Adapter) => ({
        name: adapter.name,
        cycle: (key: string) => adapter.locked(key, noop),
      }),
    ),
  ];
  const floorName = implementations[1].name;
  const peerNames = peers.map((peer) => peer.name);

  // Scenarios 1, 2 and 6: interleaved repetitions after a warm-up.
  progress('warm-up');
  for (const impl of implementations)
    await sequential(impl.cycle, Math.min(500, config.sequential));
  const seqRuns = new Map<string, Throughput[]>(implementations.map((i) => [i.name, []]));
  const concRuns = new Map<string, Throughput[]>(implementations.map((i) => [i.name, []]));
  for (let rep = 0; rep < config.reps; rep++) {
    const order = implementations.map(
      (_, i) => implementations[(i + rep) % implementations.length],
    );
    for (const impl of order) {
      progress(`scenario 1/2 rep ${rep + 1}/${config.reps}: ${impl.name}`);
      seqRuns
        .get(impl.name)!
        .push(
          await withCpu(admin, config.sequential, () => sequential(impl.cycle, config.sequential)),
        );
      concRuns
        .get(impl.name)!
        .push(
          await withCpu(admin, config.concurrent, () =>
            concurrent(impl.cycle, config.concurrent, config.workers),
          ),
        );
    }
  }
  // Ratios are medians over rounds of the ratio within each round (paired: same round, same noise).
  const summarize = (runs: Map<string, Throughput[]>) => {
    const rate = (name: string, round: number) => runs.get(name)![round].cyclesPerSec;
    const rounds = Array.from({ length: config.reps }, (_, round) => round);
    const pairedRatio = (name: string, to: (round: number) => number) =>
      median(rounds.map((round) => rate(name, round) / to(round)));
    const fastestPeer = (round: number) => Math.max(...peerNames.map((p) => rate(p, round)));
    return implementations.map(({ name }) => {
      const reps = runs.get(name)!;
      return {
        name,
        cyclesPerSec: median(reps.map((r) => r.cyclesPerSec)),
        ratio: pairedRatio(name, (round) => rate(implementations[0].name, round)),
        floorRatio: pairedRatio(name, (round) => rate(floorName, round)),
        peerRatio: pairedRatio(name, fastestPeer),
        p50Us: median(reps.map((r) => r.p50Us)),
        p99Us: median(reps.map((r) => r.p99Us)),
        nodeCpuUs: median(reps.map((r) => r.nodeCpuUs!)),
        redisCpuUs: median(reps.map((r) => r.redisCpuUs!)),
      };
    });
  };
  const scenario1 = summarize(seqRuns);
  const scenario2 = summarize(concRuns);

  // Scenario 3: 8 workers on one key, in one process and as 4 child processes × 2 workers.
  const contenders: { name: string; tag: string; adapter: Adapter }[] = [
    { name: lib.run.name, tag: 'lib', adapter: lib.run },
    { name: 'redis-semaphore Mutex', tag: 'semaphore', adapter: redisSemaphore(semaphoreClient) },
    { name: '@sesamecare-oss/redlock', tag: 'redlock', adapter: redlock(redlockClient) },
  ];
  const stateClient = newClient();
  const scenario3: Record<string, unknown>[] = [];
  let violations = 0;
  for (const mode of ['1 process × 8 workers', '4 processes × 2 workers'] as const) {
    for (const contender of contenders) {
      const reps: (ContentionResult & { counter: number; attemptsPerRelease?: number })[] = [];
      for (let rep = 0; rep < config.contendReps; rep++) {
        progress(`scenario 3 ${mode} rep ${rep + 1}: ${contender.name}`);
        const keys = { lock: freshKey('contended'), state: freshKey('state') };
        const before = await commandStats(admin);
        const result =
          mode === '1 process × 8 workers'
            ? await contend(
                contender.adapter,
                stateClient,
                keys,
                Array.from({ length: 8 }, (_, i) => `w${i}`),
                config.contendMs,
              )
            : await childContention(contender.tag, server.port, keys, config.contendMs);
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
      const seconds = config.contendMs / 1000;
      const v = reps.reduce((sum, r) => sum + r.violations, 0);
      violations += v;
      scenario3.push({
        mode,
        name: contender.name,
        sectionsPerSec: median(reps.map((r) => r.sections / seconds)),
        handoffsPerSec: median(reps.map((r) => r.handoffs / seconds)),
        p50WaitUs: median(reps.map((r) => percentile(r.waitsUs, 50))),
        p99WaitUs: median(reps.map((r) => percentile(r.waitsUs, 99))),
        minMax: median(reps.map((r) => Math.min(...r.perWorker) / Math.max(...r.perWorker))),
        violations: v,
        attemptsPerRelease:
          contender.tag === 'lib' ? median(reps.map((r) => r.attemptsPerRelease!)) : undefined,
        reps: reps.map(({ waitsUs: _w, ...rest }) => rest),
      });
    }
  }

  // Scenario 4: reentrant enter + exit inside a held lock.
  progress('scenario 4: reentrant enter/exit');
  const scenario4 = await lib.locks.run('bench:reentrant', async () => {
    const commandsBefore = await totalCommands(admin);
    const t = nowUs();
    for (let i = 0; i < config.reentrant; i++) await lib.locks.run('bench:reentrant', noop);
    const elapsed = (nowUs() - t) / 1e6;
    const commands = (await totalCommands(admin)) - commandsBefore - 1; // minus the INFO call itself
    return { opsPerSec: config.reentrant / elapsed, commandsPerOp: commands / config.reentrant };
  });

  // Scenario 5: many locks held at once with the watchdog on.
  progress(`scenario 5: ${config.held} locks held, lease ${config.lease} ms`);
  const watched = await nestjsRedisLock(server.url, { leaseTime: config.lease });
  gc();
  const memBefore = process.memoryUsage();
  const handles = [];
  for (let i = 0; i < config.held; i += 500) {
    handles.push(
      ...(await Promise.all(
        Array.from({ length: Math.min(500, config.held - i) }, (_, j) =>
          watched.locks.acquire(`bench:held:${i + j}`),
        ),
      )),
    );
  }
  gc();
  const memAfter = process.memoryUsage();
  const period = Math.floor(config.lease / 3);
  await sleep(period); // the first renewal also loads the script
  await admin.config('RESETSTAT');
  await sleep(period * config.periods + period / 2);
  const renewCalls = (await commandStats(admin)).evalsha ?? 0;
  const stillHeld = handles.filter((h) => !h.signal.aborted).length;
  // A lock the watchdog could not keep (a starved machine) shows in stillHeld; its release throws.
  await Promise.all(handles.map((h) => h.release().catch(() => undefined)));
  const scenario5 = {
    held: config.held,
    stillHeld,
    periods: config.periods,
    scriptCallsPerPeriod: renewCalls / config.periods,
    renewCallsInWindow: renewCalls,
    locksPerCall: config.held / (renewCalls / config.periods),
    rssBytesPerLock: (memAfter.rss - memBefore.rss) / config.held,
    heapBytesPerLock: (memAfter.heapUsed - memBefore.heapUsed) / config.held,
  };
  await watched.run.close();

  const s1lib = scenario1.find((r) => r.name === lib.run.name)!;
  const s1dec = scenario1.find((r) => r.name === lib.decorator.name)!;
  const s2lib = scenario2.find((r) => r.name === lib.run.name)!;
  const s2dec = scenario2.find((r) => r.name === lib.decorator.name)!;
  const scenario6 = {
    sequentialOverhead: s1lib.cyclesPerSec / s1dec.cyclesPerSec - 1,
    concurrentOverhead: s2lib.cyclesPerSec / s2dec.cyclesPerSec - 1,
  };

  // Fairness: one worker per client, 8 clients as processes or in this process.
  const scenarioFair = await fairnessScenario(
    [
      { name: lib.run.name, tag: 'lib' },
      { name: 'redis-semaphore Mutex', tag: 'semaphore' },
      { name: '@sesamecare-oss/redlock', tag: 'redlock' },
    ],
    server,
    admin,
    { durationMs: config.fairMs, reps: config.fairReps, freshKey },
    progress,
  );
  violations += scenarioFair.reduce((sum, row) => sum + row.violations, 0);

  // Scenario 9: the lock family (family.ts), on this server.
  const scenarioFamily = familyRows
    ? await familyScenario(quick, server, admin, freshKey, progress)
    : undefined;
  violations += scenarioFamily?.violations ?? 0;

  await lib.run.close();
  await fenced.run.close();
  for (const client of [rawClient, floorClient, semaphoreClient, redlockClient, stateClient, admin])
    client.disconnect();
  await server.stop();

  // Scenario 8: the same library on a 3-master Redis Cluster beside one server (cluster.ts).
  const scenarioCluster = clusterRows ? await clusterScenario(quick, progress) : undefined;
  violations += scenarioCluster?.violations ?? 0;

  // Report.
  const out: string[] = [];
  out.push(`## nestjs-redis-lock benchmark (${quick ? 'quick' : 'full'})`, '');
  out.push(
    `Machine: ${machine.cpu}, ${machine.cores} cores, ${machine.memoryGiB} GiB; Node ${machine.node}; Redis ${machine.redis} (loopback, no persistence); ${new Date().toISOString().slice(0, 10)}.`,
  );
  out.push(
    `Versions: ${Object.entries(versions)
      .map(([k, v]) => `${k} ${v}`)
      .join(', ')}. Scenarios 1-2: medians of ${config.reps} paired interleaved rounds.`,
    '',
  );
  const throughputTable = (rows: typeof scenario1) =>
    table(
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
  out.push(
    `### 1. Uncontended acquire + release, sequential, distinct keys (${config.sequential} cycles)`,
    '',
    throughputTable(scenario1),
    '',
  );
  out.push(
    `### 2. Uncontended, ${config.workers} concurrent workers, distinct keys (${config.concurrent} cycles)`,
    '',
    throughputTable(scenario2),
    '',
  );
  out.push(`### 3. 8 workers on one key (${config.contendMs / 1000} s per run)`, '');
  out.push(
    table(
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
      scenario3.map((r) => [
        r.mode as string,
        r.name as string,
        fmt(r.sectionsPerSec as number),
        fmt(r.handoffsPerSec as number),
        fmt(r.p50WaitUs as number),
        fmt(r.p99WaitUs as number),
        fmt(r.minMax as number, 2),
        r.violations as number,
        r.attemptsPerRelease === undefined ? '' : fmt(r.attemptsPerRelease as number, 2),
      ]),
    ),
    '',
  );
  out.push(
    '### 4. Reentrant enter + exit inside a held lock',
    '',
    table(
      ['ops/s', 'Redis commands per op'],
      [[fmt(scenario4.opsPerSec), fmt(scenario4.commandsPerOp, 4)]],
    ),
    '',
  );
  out.push(
    `### 5. ${config.held} locks held with the watchdog (lease ${config.lease} ms, renewal every ${period} ms)`,
    '',
    table(
      [
        'locks still held',
        'script calls per renewal period',
        'locks per call',
        'RSS bytes per lock',
        'heap bytes per lock',
      ],
      [
        [
          scenario5.stillHeld,
          fmt(scenario5.scriptCallsPerPeriod, 1),
          fmt(scenario5.locksPerCall),
          fmt(scenario5.rssBytesPerLock),
          fmt(scenario5.heapBytesPerLock),
        ],
      ],
    ),
    '',
  );
  out.push(
    '### 6. @Locked overhead against LockService.run',
    '',
    table(
      ['sequential', `${config.workers} concurrent`],
      [
        [
          `${fmt(scenario6.sequentialOverhead * 100, 1)} %`,
          `${fmt(scenario6.concurrentOverhead * 100, 1)} %`,
        ],
      ],
    ),
    '',
  );
  out.push(
    `### 7. Fairness: 8 clients × 1 worker on one key, GET then SET of a counter (${config.fairMs / 1000} s per run, ${config.fairReps} interleaved repetitions)`,
    '',
    fairnessTable(scenarioFair),
    '',
  );
  if (scenarioCluster) out.push(scenarioCluster.markdown);
  if (scenarioFamily) out.push(scenarioFamily.markdown);
  out.push(
    `Exclusion violations in scenarios 3, 7, 8 and 9: ${violations}. Total time ${fmt((Date.now() - started) / 1000)} s.`,
  );
  process.stdout.write(`${out.join('\n')}\n`);

  const resultsDir = join(__dirname, 'results');
  mkdirSync(resultsDir, { recursive: true });
  writeFileSync(
    join(resultsDir, quick ? 'latest-quick.json' : 'latest.json'),
    `${JSON.stringify({ date: new Date().toISOString(), quick, machine, versions, config, scenario1: { summary: scenario1, reps: Object.fromEntries(seqRuns) }, scenario2: { summary: scenario2, reps: Object.fromEntries(concRuns) }, scenario3, scenario4, scenario5, scenario6, scenarioFair, scenarioCluster: scenarioCluster?.json, scenarioFamily: scenarioFamily?.json, violations }, null, 2)}\n`,
  );
  if (violations > 0) {
    progress(`FAILED: ${violations} exclusion violations`);
    process.exit(1);
  }
}

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

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
