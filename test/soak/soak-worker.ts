/**
 * One soak process: argv = redisUrl key seconds workers. Prints "ready", waits for a start time
 * on stdin, then runs fenced GET-then-SET critical sections with LockService.run until the
 * time is up, and prints a JSON report.
 *
 * Each critical section: marks itself inside (SET NX: a second owner inside is an exclusion
 * violation), writes its fencing token to the protected store (a Lua check-and-set that
 * refuses a token not above the stored one: a stale writer), appends the token to the global
 * order list, increments a counter by GET then SET (a lost update shows as counter <
 * sections), and sometimes re-enters the lock (the nested hold must see the same token).
 *
 * With a fifth argument `unlocked` it runs the same sections without the lock (tokens from a
 * plain INCR): the control run that shows the detectors do detect.
 */
import 'reflect-metadata';
import { Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { Redis } from 'ioredis';
import { LockService, RedisLockModule } from '../../lib';

/** Accepts a write only with a fencing token above the stored one; returns 1 or 0. */
const FENCED_WRITE = `
local stored = tonumber(redis.call('get', KEYS[1]) or '0')
if tonumber(ARGV[1]) <= stored then return 0 end
redis.call('set', KEYS[1], ARGV[1])
return 1`;

export interface SoakWorkerReport {
  /** Critical sections completed. */
  sections: number;
  /** Sections that found another owner inside. */
  violations: number;
  /** Writes the fenced store refused (token not above the stored one). */
  staleTokens: number;
  /** Tokens not above this process's previous token. */
  nonMonotonic: number;
  /** Nested holds that saw another token than their outer hold. */
  nestedMismatch: number;
  /** lockLost$ events. */
  lostLocks: number;
  /** Sections that failed with an error. */
  errors: number;
  /** Fencing tokens seen: lowest and highest. */
  firstToken: number;
  lastToken: number;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function main() {
  const [url, key, seconds, workers, mode] = process.argv.slice(2);
  @Module({
    imports: [
      RedisLockModule.forRoot({
        redis: url,
        leaseTime: 1_000,
        waitTime: 30_000,
        fencing: true, // the soak checks that no stale token is accepted
        onLockLost: 'ignore', // counted through lockLost$ instead
      }),
    ],
  })
  class SoakModule {}
  const app = await NestFactory.createApplicationContext(SoakModule, { logger: false });
  const locks = app.get(LockService);
  const redis = new Redis(url);
  const report: SoakWorkerReport = {
    sections: 0,
    violations: 0,
    staleTokens: 0,
    nonMonotonic: 0,
    nestedMismatch: 0,
    lostLocks: 0,
    errors: 0,
    firstToken: 0,
    lastToken: 0,
  };
  const errorSamples: string[] = [];
  locks.lockLost$.subscribe(() => report.lostLocks++);
  process.stdout.write('ready\n');
  let input = '';
  for await (const chunk of process.stdin) input += (chunk as Buffer).toString();
  await sleep(Math.max(0, Number(input) - Date.now()));
  const endAt = Date.now() + Number(seconds) * 1000;
  await Promise.all(
    Array.from({ length: Number(workers) }, async () => {
      while (Date.now() < endAt) {
        try {
          const section = async (lock: { fencingToken: number | undefined }) => {
            const token = lock.fencingToken!;
            if (token <= report.lastToken) report.nonMonotonic++;
            report.lastToken = token;
            report.firstToken ||= token;
            if ((await redis.set(`${key}:inside`, '1', 'NX')) !== 'OK') report.violations++;
            if ((await redis.eval(FENCED_WRITE, 1, `${key}:store`, token)) !== 1) {
              report.staleTokens++;
            }
            await redis.rpush(`${key}:order`, token);
            const value = Number((await redis.get(`${key}:counter`)) ?? 0);
            if (Math.random() < 0.3) await sleep(Math.floor(Math.random() * 3));
            await redis.set(`${key}:counter`, value + 1);
            if (mode !== 'unlocked' && Math.random() < 0.2) {
              await locks.run(key, (nested) => {
                if (nested.fencingToken !== token) report.nestedMismatch++;
              });
            }
            await redis.del(`${key}:inside`);
          };
          if (mode === 'unlocked') {
            await section({ fencingToken: await redis.incr(`${key}:fake-token`) });
          } else {
            await locks.run(key, section);
          }
          report.sections++;
        } catch (error) {
          report.errors++;
          if (errorSamples.length < 3) errorSamples.push(String(error));
        }
      }
    }),
  );
  for (const sample of errorSamples) process.stderr.write(`soak worker error: ${sample}\n`);
  process.stdout.write(`${JSON.stringify(report)}\n`);
  redis.disconnect();
  await app.close();
}

main().catch((error: unknown) => {
  process.stderr.write(`soak worker failed: ${String(error)}\n`);
  process.exit(1);
});
