import type { INestApplication } from '@nestjs/common';
import type { Redis } from 'ioredis';
import { LockError, LockKeyError, LockOptionsError, type LockService } from '../lib';
import { lockApp } from './support/lock-app';
import type { TestRedis } from './support/redis-server';
import { suiteRedis } from './support/suite-redis';

describe('bad input to LockService: typed errors, nothing run, nothing locked', () => {
  let redis: TestRedis;
  let raw: Redis;
  let app: INestApplication;
  let locks: LockService;
  let prefix: string;
  let bodyRuns = 0;
  const body = () => {
    bodyRuns++;
    return 'ran';
  };

  const server = suiteRedis();
  beforeAll(async () => {
    ({ redis, raw } = server);
    ({ app, locks, prefix } = await lockApp(redis));
  });
  afterAll(async () => {
    await app.close();
  });
  afterEach(async () => {
    expect(bodyRuns).toBe(0);
    expect(await raw.keys(`${prefix}*`)).toEqual([]);
  });

  const huge = 'k'.repeat(1_100);
  const wideHuge = '漢'.repeat(400); // 1 200 UTF-8 bytes in 400 characters

  it.each([
    ['an empty key', '', LockKeyError, /non-empty string, got ""/],
    ['a number key', 42, LockKeyError, /non-empty string, got 42/],
    ['an undefined key', undefined, LockKeyError, /got undefined/],
    ['an object key', { id: 1 }, LockKeyError, /got a object/],
    ['a huge key', huge, LockKeyError, /1\d{3} bytes long; the limit is 1024/],
    ['a key huge in UTF-8 bytes', wideHuge, LockKeyError, /1\d{3} bytes long/],
  ])('%s', async (_what, key, type, message) => {
    for (const call of [
      () => locks.run(key as string, body),
      () => locks.acquire(key as string),
      () => locks.tryAcquire(key as string),
      () => locks.isLocked(key as string),
    ]) {
      const error = await call().catch((e: unknown) => e);
      expect(error).toBeInstanceOf(type);
      expect(error).toBeInstanceOf(LockError);
      expect((error as Error).message).toMatch(message);
    }
  });

  it.each([
    [{ waitTime: -1 }, 'waitTime'],
    [{ waitTime: '100' }, 'waitTime'],
    [{ waitTime: Number.NaN }, 'waitTime'],
    [{ leaseTime: 0 }, 'leaseTime'],
    [{ leaseTime: 29 }, 'leaseTime'],
    [{ leaseTime: 1.5e3 + 0.5 }, 'leaseTime'],
    [{ leaseTime: Infinity }, 'leaseTime'],
    [{ leaseTime: '30000' }, 'leaseTime'],
    [{ signal: 'stop' }, 'signal'],
    [null, 'options'],
  ])('lock options %j are refused naming %s', async (options, option) => {
    for (const call of [
      () => locks.run('k', body, options as never),
      () => locks.acquire('k', options as never),
    ]) {
      const error = await call().catch((e: unknown) => e);
      expect(error).toBeInstanceOf(LockOptionsError);
      expect((error as LockOptionsError).option).toBe(option);
    }
  });

  it('a brace or unicode in a key is a valid key: it round-trips to Redis as given', async () => {
    for (const key of ['{user:1}:cart', 'ünïcødé:漢字:🔒', 'a{b', 'sp ace']) {
      await locks.run(key, async () => {
        expect(await raw.exists(`${prefix}${key}`)).toBe(1);
      });
    }
  });
});
