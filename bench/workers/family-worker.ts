/**
 * A child process of the lock-family scenarios (family-pool.ts): argv = port. Prints "ready"
 * once its Nest application context is up, then for every line `{ startAt, args }` on stdin
 * runs the job's workers from startAt and prints their WorkerLogs as one JSON array line.
 * Closes and exits at the end of stdin.
 */
import 'reflect-metadata';
import { Redis } from 'ioredis';
import { createInterface } from 'node:readline';
import { nestjsRedisLock } from '../lib/adapters';
import { FAIRNESS_WAIT } from '../lib/fairness-loop';
import { runJob, type FamilyJobArgs } from '../lib/family-loops';

async function main() {
  const url = `redis://127.0.0.1:${process.argv[2]}`;
  const state = new Redis(url);
  const lib = await nestjsRedisLock(url, { waitTime: FAIRNESS_WAIT });
  process.stdout.write('ready\n');
  for await (const line of createInterface({ input: process.stdin })) {
    const { startAt, args } = JSON.parse(line) as { startAt: number; args: FamilyJobArgs };
    const logs = await runJob(lib.locks, state, args, startAt);
    process.stdout.write(`${JSON.stringify(logs)}\n`);
  }
  await lib.run.close();
  state.disconnect();
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
