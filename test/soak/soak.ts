/**
 * Soak test: several processes take one lock for a set time doing fenced GET-then-SET critical
 * sections (see soak-worker.ts).
 *
 *   npm run soak -- --seconds 60 --processes 4 [--workers 2] [--redis redis://127.0.0.1:6380]
 *
 * Without --redis it starts its own redis-server on a free loopback port. Prints a report and
 * exits 1 on any exclusion violation, stale or non-monotonic token, out-of-order token, lost
 * update, nested-token mismatch or failed section (lost-lock events are reported, not failed:
 * with a healthy Redis there should be none).
 */
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { startRedis } from '../support/redis-server';
import type { SoakWorkerReport } from './soak-worker';

export interface SoakReport {
  processes: number;
  workersPerProcess: number;
  seconds: number;
  sections: number;
  sectionsPerSecond: number;
  counter: number;
  violations: number;
  staleTokens: number;
  nonMonotonic: number;
  /** Positions in the global order list where a token is not above the one before. */
  outOfOrder: number;
  nestedMismatch: number;
  lostUpdates: number;
  lostLocks: number;
  errors: number;
  perProcess: SoakWorkerReport[];
}

export interface SoakOptions {
  seconds: number;
  processes: number;
  workers?: number;
  redisUrl?: string;
  /** Control run: the same sections without the lock (must report violations). */
  unlocked?: boolean;
}

export async function runSoak(options: SoakOptions): Promise<SoakReport> {
  const workers = options.workers ?? 2;
  const server = options.redisUrl ? undefined : await startRedis({ control: true });
  const url = options.redisUrl ?? server!.url;
  const key = `soak:${randomUUID()}`;
  const ready: Promise<void>[] = [];
  const children = Array.from({ length: options.processes }, () => {
    const child = spawn(
      process.execPath,
      [
        '-r',
        'ts-node/register/transpile-only',
        join(__dirname, 'soak-worker.ts'),
        url,
        key,
        String(options.seconds),
        String(workers),
        ...(options.unlocked ? ['unlocked'] : []),
      ],
      { stdio: ['pipe', 'pipe', 'inherit'] },
    );
    let output = '';
    ready.push(
      new Promise((resolve, reject) => {
        child.stdout.on('data', (d: Buffer) => {
          output += d.toString();
          if (output.startsWith('ready\n')) resolve();
        });
        child.once('exit', (code) => reject(new Error(`soak worker exited ${code} before ready`)));
      }),
    );
    const done = new Promise<SoakWorkerReport>((resolve, reject) =>
      child.on('exit', (code) =>
        code === 0
          ? resolve(JSON.parse(output.slice('ready\n'.length)) as SoakWorkerReport)
          : reject(new Error(`soak worker exited ${code}`)),
      ),
    );
    return { child, done };
  });
  // A worker that hangs (a stuck lock) must fail the soak, not hang it.
  const deadline = setTimeout(
    () => children.forEach(({ child }) => child.kill('SIGKILL')),
    (options.seconds + 60) * 1000,
  );
  const redis = new Redis(url);
  try {
    await Promise.all(ready);
    const startAt = Date.now() + 200;
    for (const { child } of children) child.stdin.end(String(startAt));
    const perProcess = await Promise.all(children.map((c) => c.done));
    const counter = Number((await redis.get(`${key}:counter`)) ?? 0);
    const order = (await redis.lrange(`${key}:order`, 0, -1)).map(Number);
    let outOfOrder = 0;
    for (let i = 1; i < order.length; i++) if (order[i] <= order[i - 1]) outOfOrder++;
    const sum = (field: keyof SoakWorkerReport) =>
      perProcess.reduce((total, r) => total + r[field], 0);
    const sections = sum('sections');
    return {
      processes: options.processes,
      workersPerProcess: workers,
      seconds: options.seconds,
      sections,
      sectionsPerSecond: Math.round(sections / options.seconds),
      counter,
      violations: sum('violations'),
      staleTokens: sum('staleTokens'),
      nonMonotonic: sum('nonMonotonic'),
      outOfOrder: outOfOrder + Math.abs(order.length - sections),
      nestedMismatch: sum('nestedMismatch'),
      lostUpdates: sections - counter,
      lostLocks: sum('lostLocks'),
      errors: sum('errors'),
      perProcess,
    };
  } finally {
    clearTimeout(deadline);
    for (const { child } of children) if (child.exitCode === null) child.kill('SIGKILL');
    await redis
      .del(
        ...['counter', 'store', 'inside', 'order', 'fake-token'].map((s) => `${key}:${s}`),
        key,
        `redisson_lock_token:{${key}}`,
      )
      .catch(() => undefined);
    redis.disconnect();
    await server?.stop();
  }
}

/** The violations, by name; empty when the soak kept every promise. */
export function soakViolations(r: SoakReport): string[] {
  const checks: [string, boolean][] = [
    ['exclusion violations', r.violations > 0],
    ['stale fencing tokens', r.staleTokens > 0],
    ['non-monotonic tokens in a process', r.nonMonotonic > 0],
    ['tokens out of order globally', r.outOfOrder > 0],
    ['nested holds with another token', r.nestedMismatch > 0],
    ['lost updates', r.lostUpdates !== 0],
    ['failed critical sections', r.errors > 0],
    ['no critical section at all', r.sections === 0],
  ];
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
  const redisIndex = process.argv.indexOf('--redis');
  runSoak({
    seconds: arg('seconds', 60),
    processes: arg('processes', 4),
    workers: arg('workers', 2),
    redisUrl: redisIndex > 0 ? process.argv[redisIndex + 1] : undefined,
  }).then(
    (report) => {
      const { perProcess, ...totals } = report;
      console.log('soak report');
      console.table(totals);
      console.table(perProcess);
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
