import type { Redis, RedisOptions } from 'ioredis';
import { MemoryLockStore } from './engine/memory/memory-store';
import { assertLostPolicy, type LockLostPolicy } from './engine/options/lock-options';
import {
  assertBoolean,
  assertKnownOptions,
  assertLeaseTime,
  assertOneOf,
  assertWaitTime,
  describe,
  MAX_KEY_BYTES,
} from './engine/options/validate';
import type { BusyStatus } from './lock-error-answer';
import { LockOptionsError } from './lock.errors';
import {
  DEFAULT_LEASE_TIME,
  DEFAULT_SHUTDOWN_TIMEOUT,
  DEFAULT_WAIT_TIME,
} from './redis-lock.constants';
import type { RedisLockModuleOptions } from './redis-lock-options.interface';

/** Module options after validation, with defaults filled in. */
export interface ResolvedModuleOptions {
  redis: RedisOptions | string | undefined;
  client: Redis | undefined;
  store: 'memory' | MemoryLockStore | undefined;
  keyPrefix: string;
  leaseTime: number;
  waitTime: number;
  fencing: boolean;
  onLockLost: LockLostPolicy;
  shutdownTimeout: number;
  checkOnStartup: StartupCheck;
  busyStatus: BusyStatus;
  exposeKeys: boolean;
}

/** What the module does when Redis cannot be reached at startup. */
export type StartupCheck = 'fail' | 'warn' | 'off';

const KNOWN_OPTIONS = [
  'redis',
  'client',
  'store',
  'keyPrefix',
  'leaseTime',
  'waitTime',
  'fencing',
  'onLockLost',
  'shutdownTimeout',
  'checkOnStartup',
  'busyStatus',
  'exposeKeys',
  'isGlobal',
  'mapErrors',
];

/** Checks that the module was given an options object at all (`forRoot()` or a factory). */
export function assertOptionsObject(options: unknown): asserts options is object {
  if (typeof options !== 'object' || options === null || Array.isArray(options)) {
    throw new LockOptionsError(
      'options',
      `RedisLockModule needs an options object such as { redis: 'redis://127.0.0.1:6379' }, got ${describe(options)}.`,
    );
  }
}

/** Validates module options (throwing LockOptionsError naming the option) and fills defaults. */
export function resolveModuleOptions(options: unknown): ResolvedModuleOptions {
  assertOptionsObject(options);
  const given = options as Record<string, unknown>;
  assertKnownOptions(given, KNOWN_OPTIONS);
  const o = given as RedisLockModuleOptions;
  assertOneSource(o);
  if (o.redis !== undefined) assertRedis(o.redis);
  if (o.client !== undefined) assertClient(o.client);
  if (o.store !== undefined) assertStore(o.store);
  const keyPrefix = o.keyPrefix ?? '';
  if (typeof keyPrefix !== 'string') {
    throw new LockOptionsError('keyPrefix', `expected a string, got ${describe(keyPrefix)}.`);
  }
  if (!keyPrefix.isWellFormed()) {
    throw new LockOptionsError(
      'keyPrefix',
      `contains a lone UTF-16 surrogate, which is not valid unicode (Redis would store it as U+FFFD), got ${describe(keyPrefix)}.`,
    );
  }
  if (Buffer.byteLength(keyPrefix) >= MAX_KEY_BYTES) {
    throw new LockOptionsError(
      'keyPrefix',
      `is ${Buffer.byteLength(keyPrefix)} bytes long and leaves no room for a key: a lock name (keyPrefix + key) is limited to ${MAX_KEY_BYTES} bytes.`,
    );
  }
  const leaseTime = o.leaseTime ?? DEFAULT_LEASE_TIME;
  assertLeaseTime(leaseTime);
  const waitTime = o.waitTime ?? DEFAULT_WAIT_TIME;
  assertWaitTime(waitTime);
  const fencing = o.fencing ?? false;
  assertBoolean(fencing, 'fencing');
  const onLockLost = o.onLockLost ?? 'throw';
  assertLostPolicy(onLockLost);
  const shutdownTimeout = o.shutdownTimeout ?? DEFAULT_SHUTDOWN_TIMEOUT;
  if (
    typeof shutdownTimeout !== 'number' ||
    !(shutdownTimeout >= 0) ||
    !Number.isFinite(shutdownTimeout)
  ) {
    throw new LockOptionsError(
      'shutdownTimeout',
      `expected a finite number of milliseconds >= 0, got ${describe(shutdownTimeout)}.`,
    );
  }
  const checkOnStartup = o.checkOnStartup ?? 'fail';
  assertOneOf(checkOnStartup, ['fail', 'warn', 'off'], 'checkOnStartup');
  const busyStatus = o.busyStatus ?? 409;
  if (busyStatus !== 409 && busyStatus !== 423 && busyStatus !== 503) {
    throw new LockOptionsError(
      'busyStatus',
      `expected 409, 423 or 503, got ${describe(busyStatus)}.`,
    );
  }
  const exposeKeys = o.exposeKeys ?? false;
  assertBoolean(exposeKeys, 'exposeKeys');
  return {
    checkOnStartup,
    busyStatus,
    exposeKeys,
    redis: o.redis,
    client: o.client,
    store: o.store,
    keyPrefix,
    leaseTime,
    waitTime,
    fencing,
    onLockLost,
    shutdownTimeout,
  };
}

/** Exactly one of `redis`, `client` and `store` says where the locks live. */
function assertOneSource(o: RedisLockModuleOptions): void {
  const given = (['redis', 'client', 'store'] as const).filter((name) => o[name] !== undefined);
  if (given.length === 1) return;
  throw new LockOptionsError(
    given[1] ?? 'redis',
    "give exactly one of `redis` (ioredis options or a redis:// URL; the module owns the connections), `client` (an ioredis instance you own) or `store: 'memory'` (locks in this process's memory, for tests).",
  );
}

function assertStore(store: unknown): void {
  if (store === 'memory' || store instanceof MemoryLockStore) return;
  throw new LockOptionsError(
    'store',
    `expected 'memory' or a MemoryLockStore, got ${describe(store)}.`,
  );
}

function assertRedis(redis: unknown): void {
  if (typeof redis === 'string') {
    let protocol: string | undefined;
    try {
      protocol = new URL(redis).protocol;
    } catch {
      protocol = undefined;
    }
    if (protocol !== 'redis:' && protocol !== 'rediss:') {
      throw new LockOptionsError(
        'redis',
        `expected a redis:// or rediss:// URL such as redis://127.0.0.1:6379, got ${describe(redis)}.`,
      );
    }
    return;
  }
  if (typeof redis !== 'object' || redis === null || Array.isArray(redis)) {
    throw new LockOptionsError(
      'redis',
      `expected ioredis options ({ host, port, … }) or a redis:// URL, got ${describe(redis)}.`,
    );
  }
  assertNoIoredisPrefix((redis as RedisOptions).keyPrefix, 'redis.keyPrefix');
}

/** ioredis' own keyPrefix would prefix the lock hash but not its channel: names stop matching Redisson's. */
function assertNoIoredisPrefix(prefix: unknown, option: string): void {
  if (prefix === undefined || prefix === '') return;
  throw new LockOptionsError(
    option,
    `ioredis' keyPrefix is not supported: it would prefix the lock's keys but not its pub/sub channel, so names stop matching Redisson's. Use the module's own keyPrefix option instead (e.g. keyPrefix: ${describe(prefix)}).`,
  );
}

function assertClient(client: unknown): void {
  const candidate = client as Partial<Redis> | null;
  if (
    typeof candidate !== 'object' ||
    candidate === null ||
    typeof candidate.evalsha !== 'function' ||
    typeof candidate.duplicate !== 'function'
  ) {
    throw new LockOptionsError(
      'client',
      `expected an ioredis Redis instance (new Redis(...)), got ${describe(client)}.`,
    );
  }
  if ((client as { isCluster?: boolean }).isCluster === true) {
    throw new LockOptionsError(
      'client',
      'an ioredis Cluster client is not supported yet; give a Redis client of one server or a Sentinel group.',
    );
  }
  assertNoIoredisPrefix((client as Redis).options?.keyPrefix, 'client.options.keyPrefix');
}
