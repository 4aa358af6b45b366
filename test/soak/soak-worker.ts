/**
 * One soak process: argv = redisUrl key seconds workers. Prints "ready", waits for a start time
 * on stdin, then runs fenced GET-then-SET critical sections until the time is up and prints a
 * JSON report.
 */
import 'reflect-metadata';
import { Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { Redis } from 'ioredis';
import { LockService, RedisLockModule, type LockLostError } from '../../lib';

/** Accepts a write only with a fencing token above the stored one; returns {accepted, stored}. */
const FENCED_WRITE = `
local stored = tonumber(redis.call('hget', KEYS[1], 'token') or '0')
if tonumber(ARGV[1]) <= stored then return {0, stored} end
redis.call('hset', KEYS[1], 'token', ARGV[1])
return {1, stored}`;

export interface SoakWorkerReport {
  sections: number;
  violations: number;
  staleTokens: number;
  nonMonotonic: number;
  lostLocks: number;
  errors: number;
}

async function main() {
  const [url, key, seconds, workers] = process.argv.slice(2);
  @Module({
    imports: [
      RedisLockModule.forRoot({
        redis: url,
        leaseTime: 1_000,
        waitTime: 30_000,
        onLockLost: 'ignore',
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
    lostLocks: 0,
    errors: 0,
  };
  locks.lockLost$.subscribe((_error: LockLostError) => report.lostLocks++);
  let lastToken = 0;
  process.stdout.write('ready\n');
  let input = '';
  for await (const chunk of process.stdin) input += (chunk as Buffer).toString();
  await new Promise((resolve) => setTimeout(resolve, Math.max(0, Number(input) - Date.now())));
  const endAt = Date.now() + Number(seconds) * 1000;
  await Promise.all(
    Array.from({ length: Number(workers) }, async () => {
      while (Date.now() < endAt) {
        try {
          await locks.run(key, async (lock) => {
            const token = lock.fencingToken!;
            if (token <= lastToken) report.nonMonotonic++;
            lastToken = token;
            if ((await redis.set(`${key}:inside`, '1', 'NX')) !== 'OK') report.violations++;
            const [accepted] = (await redis.eval(FENCED_WRITE, 1, `${key}:store`, token)) as [
              number,
              number,
            ];
            if (accepted !== 1) report.staleTokens++;
            const value = Number((await redis.get(`${key}:counter`)) ?? 0);
            await redis.set(`${key}:counter`, value + 1);
            await redis.del(`${key}:inside`);
          });
          report.sections++;
        } catch {
          report.errors++;
        }
      }
    }),
  );
  process.stdout.write(`${JSON.stringify(report)}\n`);
  redis.disconnect();
  await app.close();
}

void main();
