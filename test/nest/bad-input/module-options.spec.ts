import { Injectable, Module } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { Redis } from 'ioredis';
import {
  LockError,
  LockOptionsError,
  RedisLockModule,
  type RedisLockModuleOptions,
} from '../../../lib';

/** Module options are checked at bootstrap, before anything connects (no Redis needed). */
describe('bad module options: bootstrap fails with LockOptionsError naming the option', () => {
  const url = 'redis://127.0.0.1:1';
  const client = new Redis({ lazyConnect: true });
  afterAll(() => client.disconnect());

  const viaForRoot = async (options: unknown) =>
    Test.createTestingModule({
      imports: [RedisLockModule.forRoot(options as RedisLockModuleOptions)],
    }).compile();

  @Injectable()
  class Config {
    lockOptions: unknown;
  }
  @Module({ providers: [Config], exports: [Config] })
  class ConfigModule {}

  const viaForRootAsync = (options: unknown) =>
    Test.createTestingModule({
      imports: [
        RedisLockModule.forRootAsync({
          imports: [ConfigModule],
          inject: [Config],
          useFactory: async (config: Config) => {
            config.lockOptions = options;
            await Promise.resolve();
            return config.lockOptions as RedisLockModuleOptions;
          },
        }),
      ],
    }).compile();

  it.each([
    // Not an object: forRoot() checks it before Nest's module builder spreads it (which would
    // fail with a TypeError, "Cannot convert undefined or null to object").
    [undefined, 'options', /needs an options object/],
    [null, 'options', /needs an options object/],
    [url, 'options', /needs an options object .* got "redis:\/\/127.0.0.1:1"/],
    [{}, 'redis', /give exactly one of `redis`/],
    [{ redis: url, client }, 'client', /give exactly one of `redis`/], // client: an ioredis instance
    [{ redis: 'http://127.0.0.1:6379' }, 'redis', /redis:\/\/ or rediss:\/\/ URL/],
    [{ redis: '127.0.0.1:6379' }, 'redis', /redis:\/\/ or rediss:\/\/ URL/],
    [{ redis: 6379 }, 'redis', /ioredis options .* got 6379/],
    [{ redis: ['127.0.0.1'] }, 'redis', /got an array/],
    [{ redis: null }, 'redis', /got null/],
    [{ client: {} }, 'client', /an ioredis Redis instance/],
    [{ client: 'redis://127.0.0.1' }, 'client', /an ioredis Redis instance/],
    [{ redis: url, keyPrefix: 5 }, 'keyPrefix', /expected a string, got 5/],
    [{ redis: url, leaseTime: 10 }, 'leaseTime', /from 30 to 2\^31-1, got 10/],
    [{ redis: url, leaseTime: 1000.5 }, 'leaseTime', /whole number/],
    [{ redis: url, leaseTime: '30000' }, 'leaseTime', /got "30000"/],
    [{ redis: url, leaseTime: Infinity }, 'leaseTime', /got Infinity/],
    [{ redis: url, waitTime: -1 }, 'waitTime', />= 0/],
    [{ redis: url, waitTime: Number.NaN }, 'waitTime', /got NaN/],
    [{ redis: url, waitTime: '10s' }, 'waitTime', /got "10s"/],
    [{ redis: url, fencing: 'yes' }, 'fencing', /true or false, got "yes"/],
    [{ redis: url, fencing: 1 }, 'fencing', /true or false, got 1/],
    [{ redis: url, onLockLost: 'retry' }, 'onLockLost', /'throw', 'ignore' or a function/],
    [{ redis: url, onLockLost: 0 }, 'onLockLost', /got 0/],
    [{ redis: url, shutdownTimeout: -5 }, 'shutdownTimeout', /finite number .* got -5/],
    [{ redis: url, shutdownTimeout: Infinity }, 'shutdownTimeout', /got Infinity/],
    [{ redis: url, leasetime: 100 }, 'leasetime', /did you mean "leaseTime"/],
    [{ redis: url, KeyPrefix: 'a:' }, 'KeyPrefix', /did you mean "keyPrefix"/],
    [
      { redis: url, host: '127.0.0.1' },
      'host',
      /unknown option\. Known options: redis, cluster, client/,
    ],
    [{ redis: url, timeout: 5 }, 'timeout', /unknown option/],
    [
      { redis: url, cluster: { nodes: ['127.0.0.1:7000'] } },
      'cluster',
      /exactly one of .*got `redis` and `cluster`/,
    ],
    [{ cluster: { nodes: [] } }, 'cluster.nodes', /non-empty array .* got an empty array/],
    [{ redis: url, syncReplicas: -1 }, 'syncReplicas', /whole number of replicas/],
    [{ redis: url, syncReplicas: 1.5 }, 'syncReplicas', /whole number of replicas/],
    [{ redis: url, syncTimeout: 0 }, 'syncTimeout', /from 1 to 60000, got 0/],
    [{ cluster: { nodes: '127.0.0.1:7000' } }, 'cluster.nodes', /non-empty array/],
    [{ cluster: [] }, 'cluster', /expected \{ nodes/],
    [
      { cluster: { nodes: ['127.0.0.1'] } },
      'cluster.nodes[0]',
      /host:port node .* got "127.0.0.1"/,
    ],
    [{ cluster: { nodes: [{ host: '127.0.0.1' }] } }, 'cluster.nodes[0]', /host:port node/],
    [
      { cluster: { nodes: ['127.0.0.1:7000', { host: 'x', port: 70000 }] } },
      'cluster.nodes[1]',
      /host:port/,
    ],
    [
      { cluster: { nodes: ['127.0.0.1:7000'], options: { keyPrefix: 'a:' } } },
      'cluster.options.keyPrefix',
      /not supported/,
    ],
  ])('%p is refused naming %s', async (options, option, message) => {
    for (const start of [viaForRoot, viaForRootAsync]) {
      const error = await start(options).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(LockOptionsError);
      expect(error).toBeInstanceOf(LockError);
      expect((error as LockOptionsError).option).toBe(option);
      expect((error as Error).message).toContain(`Invalid option "${option}"`);
      expect((error as Error).message).toMatch(message);
    }
  });

  it.each([
    // Accepted, these would make every lock call fail or misbehave at run time instead.
    [
      'a 1 024-byte keyPrefix (no room for a key)',
      { redis: url, keyPrefix: 'p'.repeat(1_024) },
      'keyPrefix',
      /1024|bytes|long/,
    ],
    [
      'a keyPrefix with an unbalanced hash tag',
      { redis: url, keyPrefix: 'tenant{' },
      'keyPrefix',
      /has a "\{" with no "\}" after it: on a Redis Cluster/,
    ],
    [
      'a keyPrefix with an empty hash tag',
      { redis: url, keyPrefix: '{}:' },
      'keyPrefix',
      /empty hash tag/,
    ],
    [
      'a keyPrefix with a lone surrogate',
      { redis: url, keyPrefix: 'app\uD800:' },
      'keyPrefix',
      /surrogate|unicode|UTF/i,
    ],
    [
      'a waitTime of 2^32 ms (overflows timers)',
      { redis: url, waitTime: 2 ** 32 },
      'waitTime',
      /2\^31|Infinity/,
    ],
  ])(
    '%s is refused at bootstrap, not at the first lock call',
    async (_what, options, option, message) => {
      const error = await viaForRoot(options).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(LockOptionsError);
      expect((error as LockOptionsError).option).toBe(option);
      expect((error as Error).message).toMatch(message);
    },
  );
});
