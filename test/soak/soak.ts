/**
 * Soak test: several processes take one lock for a set time doing fenced GET-then-SET critical
 * sections. `npm run soak -- --seconds 60 --processes 4 [--workers 2] [--redis redis://…]`.
 * Exits 1 on any exclusion violation, stale token, non-monotonic token or lost update.
 */
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { startRedis } from '../support/redis-server';
import type { SoakWorkerReport } from './soak-worker';

export interface SoakReport {
  processes: number;
  seconds: number;
  sections: number;
  counter: number;
  violations: number;
  staleTokens: number;
  nonMonotonic: number;
  lostUpdates: number;
  lostLocks: number;
  errors: number;
  perProcess: SoakWorkerReport[];
}

export async function runSoak(options: {
  seconds: number;
  processes: number;
  workers?: number;
  redisUrl?: string;
}): Promise<SoakReport> {
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
        String(options.workers ?? 2),
      ],
      { stdio: ['pipe', 'pipe', 'inherit'] },
    );
    let output = '';
    ready.push(
      new Promise((resolve) =>
        child.stdout.on(
          'data',
          (d: Buffer) => (output += d.toString()).startsWith('ready\n') && resolve(),
        ),
      ),
    );
    const done = new Promise<SoakWorkerReport>((resolve, reject) =>
      child.on('exit', (code) =>
        code === 0
          ? resolve(JSON.parse(output.slice(6)) as SoakWorkerReport)
          : reject(new Error(`soak worker exited ${code}`)),
      ),
    );
    return { child, done };
  });
  await Promise.all(ready);
  const startAt = Date.now() + 200;
  for (const { child } of children) child.stdin.end(String(startAt));
  const perProcess = await Promise.all(children.map((c) => c.done));
  const redis = new Redis(url);
  const counter = Number((await redis.get(`${key}:counter`)) ?? 0);
  await redis.del(
    `${key}:counter`,
    `${key}:store`,
    `${key}:inside`,
    key,
    `redisson_lock_token:{${key}}`,
  );
  redis.disconnect();
  await server?.stop();
  const sum = (field: keyof SoakWorkerReport) =>
    perProcess.reduce((total, r) => total + r[field], 0);
  const sections = sum('sections');
  return {
    processes: options.processes,
    seconds: options.seconds,
    sections,
    counter,
    violations: sum('violations'),
    staleTokens: sum('staleTokens'),
    nonMonotonic: sum('nonMonotonic'),
    lostUpdates: sections - counter,
    lostLocks: sum('lostLocks'),
    errors: sum('errors'),
    perProcess,
  };
}

/** True when the soak kept every promise. */
export const soakPassed = (r: SoakReport) =>
  r.violations === 0 &&
  r.staleTokens === 0 &&
  r.nonMonotonic === 0 &&
  r.lostUpdates === 0 &&
  r.errors === 0;

if (require.main === module) {
  const arg = (name: string, fallback: number) => {
    const index = process.argv.indexOf(`--${name}`);
    return index > 0 ? Number(process.argv[index + 1]) : fallback;
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
      console.log(soakPassed(report) ? 'OK: no violation' : 'FAILED');
      process.exit(soakPassed(report) ? 0 : 1);
    },
    (error: unknown) => {
      console.error(error);
      process.exit(1);
    },
  );
}
