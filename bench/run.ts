/**
 * The benchmark: this library against the raw Redis round-trip limit and its Node peers, on a
 * redis-server of its own. `npm run bench` (full, a few minutes) or `npm run bench -- --quick`.
 * Progress goes to stderr, markdown tables to stdout, every repetition to results/latest.json.
 * Exits 1 if any contention run saw an exclusion violation (CI runs --quick for that).
 * The Redis Cluster rows (scenarios/cluster.ts) run last; `--no-cluster` skips them,
 * `--cluster-only` runs only them. The lock-family rows (scenarios/family.ts: read-write, fair,
 * multi-lock, semaphore) run on the same server after scenario 7; `--no-family` skips them,
 * `--family-only` runs only them; `--fairness-only` runs only scenario 7. Layout: scenarios/ (one module per scenario), workers/ (the
 * child processes' entries), lib/ (adapters, loops, statistics, process pools).
 */
import 'reflect-metadata';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { NO_PERSISTENCE, spawnRedisServer } from '../tools/redis/redis-process';
import {
  nestjsRedisLock,
  protocolFloor,
  redisSemaphore,
  redlock,
  type Adapter,
} from './lib/adapters';
import { clusterScenario } from './scenarios/cluster';
import { contentionScenario, contentionTable } from './scenarios/contention';
import { fairnessScenario, fairnessTable } from './scenarios/fairness';
import { familyOnly, familyScenario } from './scenarios/family';
import {
  heldLocks,
  heldLocksTable,
  reentrancy,
  reentrancyTable,
  renewalPeriod,
} from './scenarios/held-locks';
import { fmt } from './lib/stats';
import {
  lockedOverhead,
  overheadTable,
  throughputTable,
  uncontendedScenario,
  type Implementation,
} from './scenarios/uncontended';

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
      reps: 14,
      sequential: 5_000,
      concurrent: 40_000,
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

/** The fairness scenario's contenders (scenario 7), after the two hand-off floors. */
const FAIRNESS_CONTENDERS = [
  { name: 'hand-off floor, every waiter woken', tag: 'floor-all' },
  { name: 'hand-off floor, only the next woken', tag: 'floor-next' },
  { name: 'nestjs-redis-lock run()', tag: 'lib' },
  { name: 'redis-semaphore Mutex', tag: 'semaphore' },
  { name: '@sesamecare-oss/redlock', tag: 'redlock' },
] as const;

const progress = (message: string) => process.stderr.write(`[bench] ${message}\n`);
let keySeq = 0;
const freshKey = (tag: string) => `bench:${tag}:${++keySeq}`;

/** The installed version of a package (its package.json under node_modules). */
function packageVersion(name: string): string {
  const file = join(process.cwd(), 'node_modules', name, 'package.json');
  return (JSON.parse(readFileSync(file, 'utf8')) as { version: string }).version;
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
    [
      'ioredis',
      'redis',
      '@nestjs/core',
      'redis-semaphore',
      '@sesamecare-oss/redlock',
      'typescript',
    ].map((name) => [name, packageVersion(name)]),
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

  // Scenario 7 (scenarios/fairness.ts): one worker per client, 8 clients as processes or in this process.
  const fairness = () =>
    fairnessScenario(
      FAIRNESS_CONTENDERS,
      server,
      admin,
      { durationMs: config.fairMs, reps: config.fairReps, freshKey },
      progress,
    );
  if (process.argv.includes('--fairness-only')) {
    const rows = await fairness();
    const violations = rows.reduce((sum, row) => sum + row.violations, 0);
    process.stdout.write(`${fairnessTable(rows)}\nExclusion violations: ${violations}.\n`);
    process.exit(violations > 0 ? 1 : 0);
  }
  const rawClient = newClient();
  const trivial = (await rawClient.script('LOAD', 'return 1')) as string;
  const semaphoreClient = newClient();
  const redlockClient = newClient();
  const floorClient = newClient();
  const controlClient = newClient();
  const lib = await nestjsRedisLock(server.url);
  // What the fencing token costs on distinct keys (a new counter key per name).
  const fenced = await nestjsRedisLock(server.url, { fencing: true });
  // The store on a node-redis client (`client: nodeRedisClient(createClient(...))`).
  const onNodeRedis = await nestjsRedisLock(server.url, { nodeRedis: true });
  const noop = () => Promise.resolve();
  const peers = [redisSemaphore(semaphoreClient), redlock(redlockClient)];
  const floor = await protocolFloor(floorClient);
  // The floor again, just before it in every round: how far two identical rows drift apart.
  const control = await protocolFloor(controlClient, 'protocol floor again (control)');
  const implementations: Implementation[] = [
    {
      name: 'raw limit (2 × EVALSHA)',
      cycle: async (key) => {
        await rawClient.evalsha(trivial, 1, key);
        await rawClient.evalsha(trivial, 1, key);
      },
    },
    ...[control, floor, lib.run, lib.decorator, fenced.run, onNodeRedis.run, ...peers].map(
      (adapter: Adapter) => ({
        name: adapter.name,
        cycle: (key: string) => adapter.locked(key, noop),
      }),
    ),
  ];

  // Scenarios 1 and 2: interleaved repetitions after a warm-up (scenarios/uncontended.ts).
  const { scenario1, scenario2, seqRuns, concRuns } = await uncontendedScenario(
    implementations,
    { floor: floor.name, peers: peers.map((peer) => peer.name) },
    admin,
    config,
    freshKey,
    progress,
  );

  // Scenario 3: 8 workers on one key, in one process and as 4 child processes × 2 workers
  // (scenarios/contention.ts).
  const contenders = [
    { name: lib.run.name, tag: 'lib', adapter: lib.run },
    { name: 'redis-semaphore Mutex', tag: 'semaphore', adapter: redisSemaphore(semaphoreClient) },
    { name: '@sesamecare-oss/redlock', tag: 'redlock', adapter: redlock(redlockClient) },
  ];
  const stateClient = newClient();
  const scenario3 = await contentionScenario(
    contenders,
    server,
    admin,
    stateClient,
    { durationMs: config.contendMs, reps: config.contendReps, freshKey },
    progress,
  );
  let violations = scenario3.reduce((sum, row) => sum + row.violations, 0);

  // Scenarios 4 and 5: inside a held lock, and many locks held at once (scenarios/held-locks.ts).
  const scenario4 = await reentrancy(lib.locks, admin, config.reentrant, progress);
  const scenario5 = await heldLocks(server.url, admin, config, progress);
  // Scenario 6: @Locked against LockService.run, from the rows of scenarios 1 and 2.
  const scenario6 = lockedOverhead(scenario1, scenario2, {
    run: lib.run.name,
    decorator: lib.decorator.name,
  });

  const scenarioFair = await fairness();
  violations += scenarioFair.reduce((sum, row) => sum + row.violations, 0);

  // Scenario 9: the lock family (scenarios/family.ts), on this server.
  const scenarioFamily = familyRows
    ? await familyScenario(quick, server, admin, freshKey, progress)
    : undefined;
  violations += scenarioFamily?.violations ?? 0;

  await lib.run.close();
  await fenced.run.close();
  await onNodeRedis.run.close();
  for (const client of [
    rawClient,
    floorClient,
    controlClient,
    semaphoreClient,
    redlockClient,
    stateClient,
    admin,
  ])
    client.disconnect();
  await server.stop();

  // Scenario 8: the same library on a 3-master Redis Cluster beside one server (scenarios/cluster.ts).
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
  out.push(
    `### 3. 8 workers on one key (${config.contendMs / 1000} s per run)`,
    '',
    contentionTable(scenario3),
    '',
  );
  out.push('### 4. Reentrant enter + exit inside a held lock', '', reentrancyTable(scenario4), '');
  out.push(
    `### 5. ${config.held} locks held with the watchdog (lease ${config.lease} ms, renewal every ${renewalPeriod(config.lease)} ms)`,
    '',
    heldLocksTable(scenario5),
    '',
  );
  out.push(
    '### 6. @Locked overhead against LockService.run',
    '',
    overheadTable(scenario6, config.workers),
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

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
