/**
 * A child process of the fairness scenario's outside-harness shape, in plain JavaScript (no
 * ts-node): argv = tag port lockKey counterKey durationMs. It loads the built package (`dist/`,
 * what `npm pack` ships) or redis-semaphore, makes its client (this library: its own Nest
 * application context with `forRoot({ redis, leaseTime: 10000, waitTime: 10000 })`), and loops
 * from the moment it is ready, with no warm-up and no start shared with the other workers, as an
 * outside harness that starts 8 processes at once does. Prints its WorkerLog as one JSON line.
 */
'use strict';
require('reflect-metadata');
const { join } = require('node:path');
const { Redis } = require('ioredis');

const clockMs = () => performance.timeOrigin + performance.now();
const WAIT = 10_000;

async function libraryClient(url, lock) {
  const { Module } = require('@nestjs/common');
  const { NestFactory } = require('@nestjs/core');
  const { RedisLockModule, LockService } = require(join(__dirname, '..', '..', 'dist'));
  class OutsideModule {}
  Module({
    imports: [RedisLockModule.forRoot({ redis: url, leaseTime: WAIT, waitTime: WAIT })],
  })(OutsideModule);
  const app = await NestFactory.createApplicationContext(OutsideModule, { logger: false });
  const locks = app.get(LockService);
  return { locked: (fn) => locks.run(lock, fn), close: () => app.close() };
}

function semaphoreClient(url, lock) {
  const { Mutex } = require('redis-semaphore');
  const client = new Redis(url);
  return {
    async locked(fn) {
      const mutex = new Mutex(client, lock, { lockTimeout: WAIT, acquireTimeout: WAIT });
      await mutex.acquire();
      try {
        return await fn();
      } finally {
        await mutex.release();
      }
    },
    close: async () => client.disconnect(),
  };
}

async function main() {
  const [tag, port, lock, counter, duration] = process.argv.slice(2);
  const url = `redis://127.0.0.1:${port}`;
  const state = new Redis(url);
  const client = tag === 'lib' ? await libraryClient(url, lock) : semaphoreClient(url, lock);
  const log = { values: [], called: [], began: [], ended: [], returned: [], timeouts: 0 };
  const endAt = Date.now() + Number(duration);
  while (Date.now() < endAt) {
    const called = clockMs();
    try {
      await client.locked(async () => {
        log.called.push(called);
        log.began.push(clockMs());
        const value = Number((await state.get(counter)) ?? 0);
        await state.set(counter, value + 1);
        log.values.push(value);
        log.ended.push(clockMs());
      });
      log.returned.push(clockMs());
    } catch {
      log.timeouts++;
    }
  }
  process.stdout.write(`${JSON.stringify(log)}\n`);
  await client.close();
  state.disconnect();
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
