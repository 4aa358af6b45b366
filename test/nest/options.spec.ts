import { Redis } from 'ioredis';
import { LockError, LockOptionsError } from '../../lib';
import { resolveLockOptions } from '../../lib/core/options/lock-options';
import { channelName, tokenKey, unlockLatchKey } from '../../lib/stores/redis/redis-names';
import { resolveModuleOptions } from '../../lib/nest/options/redis-lock-options.validation';

describe('module options (pure)', () => {
  it('fills the documented defaults', () => {
    expect(resolveModuleOptions({ redis: 'redis://127.0.0.1:6379' })).toEqual({
      checkOnStartup: 'fail',
      redis: 'redis://127.0.0.1:6379',
      client: undefined,
      cluster: undefined,
      keyPrefix: '',
      leaseTime: 30_000,
      waitTime: 10_000,
      fencing: false,
      onLockLost: 'throw',
      shutdownTimeout: 5_000,
      busyStatus: 409,
      redisErrorStatus: 503,
      exposeKeys: false,
      tracing: false,
      syncReplicas: 0,
      syncTimeout: 1_000,
      fairQueueTimeout: 5_000,
      maxHold: Infinity,
      clientRegistry: true,
    });
  });

  it('accepts a client instead of redis', () => {
    const client = new Redis({ lazyConnect: true });
    expect(resolveModuleOptions({ client }).client).toBe(client);
    client.disconnect();
  });

  it.each([
    [undefined, 'options', /needs an options object/],
    ['redis://x', 'options', /needs an options object/],
    [{}, 'redis', /exactly one of `redis`/],
    [{ redis: 'redis://x', client: {} }, 'client', /exactly one of `redis`/],
    [{ redis: 'http://x' }, 'redis', /redis:\/\/ or rediss:\/\/ URL/],
    [{ redis: 'not a url' }, 'redis', /redis:\/\/ or rediss:\/\/ URL/],
    [{ redis: 6379 }, 'redis', /ioredis options/],
    [{ redis: [] }, 'redis', /ioredis options/],
    [{ client: {} }, 'client', /an ioredis Redis instance/],
    [{ redis: {}, keyPrefix: 5 }, 'keyPrefix', /expected a string/],
    [{ redis: {}, leaseTime: 10 }, 'leaseTime', /from 30 to 2\^31-1, got 10/],
    [{ redis: {}, leaseTime: 1000.5 }, 'leaseTime', /whole number/],
    [{ redis: {}, leaseTime: '30000' }, 'leaseTime', /got "30000"/],
    [{ redis: {}, leaseTime: Infinity }, 'leaseTime', /got Infinity/],
    [{ redis: {}, waitTime: -1 }, 'waitTime', />= 0/],
    [{ redis: {}, waitTime: Number.NaN }, 'waitTime', /got NaN/],
    [{ redis: {}, fencing: 'yes' }, 'fencing', /true or false/],
    [{ redis: {}, onLockLost: 'retry' }, 'onLockLost', /'throw', 'ignore' or a function/],
    [{ redis: {}, shutdownTimeout: -5 }, 'shutdownTimeout', /finite number/],
    [{ redis: {}, busyStatus: 429 }, 'busyStatus', /expected 409, 423 or 503, got 429/],
    [
      { redis: {}, redisErrorStatus: 429 },
      'redisErrorStatus',
      /expected 500, 502, 503 or 504, got 429/,
    ],
    [{ redis: {}, exposeKeys: 1 }, 'exposeKeys', /true or false/],
    [{ redis: {}, tracing: 'on' }, 'tracing', /true or false/],
    [{ redis: {}, leasetime: 100 }, 'leasetime', /did you mean "leaseTime"/],
    [{ redis: {}, host: 'x' }, 'host', /unknown option/],
  ])('rejects %j naming %s', (options, option, message) => {
    let error: unknown;
    try {
      resolveModuleOptions(options);
    } catch (thrown) {
      error = thrown;
    }
    expect(error).toBeInstanceOf(LockOptionsError);
    expect(error).toBeInstanceOf(LockError);
    expect((error as LockOptionsError).option).toBe(option);
    expect((error as Error).message).toMatch(message);
    expect((error as Error).message).toContain(`Invalid option "${option}"`);
  });
});

describe('lock options (pure)', () => {
  const defaults = {
    waitTime: 100,
    leaseTime: 30_000,
    fencing: false,
    syncReplicas: 0,
    maxHold: Infinity,
  };

  it('uses the module lease with the watchdog unless a lease is given', () => {
    expect(resolveLockOptions(undefined, defaults)).toEqual({
      waitTime: 100,
      leaseTime: 30_000,
      watchdog: true,
      signal: undefined,
      fencing: false,
      syncReplicas: 0,
      mode: undefined,
      fair: false,
      holdAtLeast: 0,
      maxHold: Infinity,
    });
    expect(resolveLockOptions({ leaseTime: 500, waitTime: 0, fencing: true }, defaults)).toEqual({
      waitTime: 0,
      leaseTime: 500,
      watchdog: false,
      signal: undefined,
      fencing: true,
      syncReplicas: 0,
      mode: undefined,
      fair: false,
      holdAtLeast: 0,
      maxHold: Infinity,
    });
    expect(resolveLockOptions({ syncReplicas: 2 }, defaults).syncReplicas).toBe(2);
    expect(() => resolveLockOptions({ syncReplicas: -1 }, defaults)).toThrow(/syncReplicas/);
    expect(resolveLockOptions({ waitTime: Infinity }, defaults).waitTime).toBe(Infinity);
  });

  it.each([
    [{ waitTime: -1 }, 'waitTime'],
    [{ waitTime: '5' }, 'waitTime'],
    [{ leaseTime: 0 }, 'leaseTime'],
    [{ leaseTime: 2 ** 32 }, 'leaseTime'],
    [{ signal: {} }, 'signal'],
    [{ fencing: 'yes' }, 'fencing'],
    ['fast', 'options'],
  ])('rejects %j naming %s', (options, option) => {
    expect(() => resolveLockOptions(options as never, defaults)).toThrow(
      expect.objectContaining({ option }) as Error,
    );
  });
});

describe('Redisson names (pure)', () => {
  it('puts auxiliary names in the lock’s slot with a hash tag, unless it has one', () => {
    expect(channelName('order:1')).toBe('redisson_lock__channel:{order:1}');
    expect(channelName('{order}:1')).toBe('redisson_lock__channel:{order}:1');
    expect(tokenKey('order:1')).toBe('redisson_lock_token:{order:1}');
    expect(unlockLatchKey('order:1', 'ab'.repeat(16))).toBe(
      `redisson_unlock_latch:{order:1}:${'ab'.repeat(16)}`,
    );
  });
});
