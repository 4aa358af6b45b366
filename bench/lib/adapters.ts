import { Injectable, Module } from '@nestjs/common';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { NestFactory } from '@nestjs/core';
import { Redlock } from '@sesamecare-oss/redlock';
import type { Redis } from 'ioredis';
import { Mutex } from 'redis-semaphore';
import { createClient } from 'redis';
import { LockService, Locked, RedisLockModule } from '../../lib';
import { nodeRedisClient } from '../../lib/node-redis';

/** One lock implementation under test: take `key`, run `fn`, release. */
export interface Adapter {
  readonly name: string;
  locked<T>(key: string, fn: () => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

@Injectable()
class LockedProvider {
  @Locked('<0>')
  run<T>(_key: string, fn: () => Promise<T>): Promise<T> {
    return fn();
  }
}

/**
 * This library through LockService.run and through @Locked, on one Nest application context;
 * with `nodeRedis`, on a node-redis client of its own passed as `client` (closed with it).
 */
export async function nestjsRedisLock(
  url: string,
  {
    nodeRedis = false,
    ...options
  }: {
    leaseTime?: number;
    fencing?: boolean;
    waitTime?: number;
    checkOnStartup?: 'fail' | 'warn' | 'off';
    nodeRedis?: boolean;
  } = {},
): Promise<{ run: Adapter; decorator: Adapter; locks: LockService }> {
  const userClient = nodeRedis ? createClient({ url }) : undefined;
  const source = userClient ? { client: nodeRedisClient(userClient) } : { redis: url };
  @Module({
    imports: [RedisLockModule.forRoot({ ...source, waitTime: 60_000, ...options })],
    providers: [LockedProvider],
  })
  class BenchModule {}
  const app = await NestFactory.createApplicationContext(BenchModule, { logger: false });
  const locks = app.get(LockService);
  const provider = app.get(LockedProvider);
  let closed = false;
  const close = async () => {
    if (closed) return;
    closed = true;
    await app.close();
    userClient?.destroy();
  };
  const variant = `${options.fencing === true ? ', fencing: true' : ''}${nodeRedis ? ', node-redis' : ''}`;
  return {
    locks,
    run: {
      name: `nestjs-redis-lock run()${variant}`,
      locked: (key, fn) => locks.run(key, fn),
      close,
    },
    decorator: {
      name: `nestjs-redis-lock @Locked${variant}`,
      locked: (key, fn) => provider.run(key, fn),
      close,
    },
  };
}

/** redis-semaphore's Mutex at its documented defaults. */
export function redisSemaphore(client: Redis): Adapter {
  return {
    name: 'redis-semaphore Mutex',
    async locked(key, fn) {
      const mutex = new Mutex(client, key);
      await mutex.acquire();
      try {
        return await fn();
      } finally {
        await mutex.release();
      }
    },
    close: () => Promise.resolve(),
  };
}

/**
 * @sesamecare-oss/redlock on one server at its documented defaults (lease 5 s, as its README).
 * `persist`: a failed acquire (its 10 retries spent) is retried here; false: it throws.
 */
export function redlock(client: Redis, persist = true): Adapter {
  const instance = new Redlock([client]);
  return {
    name: '@sesamecare-oss/redlock',
    async locked(key, fn) {
      // Its defaults give up after 10 retries; a failed acquire is retried by the caller loop.
      for (;;) {
        let lock;
        try {
          lock = await instance.acquire([key], 5_000);
        } catch (error) {
          if (!persist) throw error;
          continue;
        }
        try {
          return await fn();
        } finally {
          await lock.release().catch(() => undefined);
        }
      }
    },
    close: () => Promise.resolve(),
  };
}

/**
 * The protocol floor's scripts (floor/acquire.lua: PTTL+HSET+PEXPIRE; floor/release.lua:
 * HDEL+PUBLISH+latch SET PX) loaded on `client`, each lock call one bare EVALSHA.
 */
export async function floorScripts(client: Redis): Promise<{
  /** Takes `key` (30 s lease) for a new owner: its number, or undefined when `key` is busy. */
  take(key: string): Promise<number | undefined>;
  /** Releases owner `n`'s hold of `key`, publishing on `channel` (the lock's by default). */
  release(key: string, n: number, channel?: string): Promise<unknown>;
}> {
  const source = (file: string) => readFileSync(join(__dirname, 'floor', file), 'utf8');
  const acquire = (await client.script('LOAD', source('acquire.lua'))) as string;
  const release = (await client.script('LOAD', source('release.lua'))) as string;
  const client16 = randomBytes(8).toString('hex');
  let seq = 0;
  return {
    async take(key) {
      const n = ++seq;
      return (await client.evalsha(acquire, 1, key, 30_000, `${client16}:${n}`)) === 0
        ? n
        : undefined;
    },
    release(key, n, channel = `redisson_lock__channel:{${key}}`) {
      const latch = `redisson_unlock_latch:{${key}}:${client16}${String(n).padStart(16, '0')}`;
      return client.evalsha(release, 2, key, latch, channel, `${client16}:${n}`, 10_000);
    },
  };
}

/**
 * The protocol floor: the minimal Redisson-layout scripts (floorScripts) called with bare
 * ioredis EVALSHA, no library code. What any Redisson-compatible lock with an idempotent
 * release costs at least. `name`: its row's name (a second instance on its own client is the
 * run's control row).
 */
export async function protocolFloor(
  client: Redis,
  name = 'protocol floor (2 × EVALSHA, Redisson layout)',
): Promise<Adapter> {
  const scripts = await floorScripts(client);
  return {
    name,
    async locked(key, fn) {
      const n = await scripts.take(key);
      if (n === undefined) throw new Error(`protocol floor: ${key} is busy`);
      try {
        return await fn();
      } finally {
        await scripts.release(key, n);
      }
    },
    close: () => Promise.resolve(),
  };
}
