import type { Cluster, Redis, RedisOptions } from '../../stores/redis';
import type { MemoryLockStore } from '../../stores/memory';
import { assertConnectionSource, SOURCE_OPTIONS } from './connection-source.validation';
import type { ClusterConfig } from '../../stores/redis';
import {
  assertLostPolicy,
  assertSyncReplicas,
  type LockLostPolicy,
  assertBoolean,
  assertKnownOptions,
  assertLeaseTime,
  assertOneOf,
  assertWaitTime,
  describe,
  hashTagMessage,
  hashTagProblem,
  MAX_KEY_BYTES,
} from '../../core';
import type { BusyStatus } from '../errors/lock-error-answer';
import { noReplicasError } from '../../store';
import { REDIS_ERROR_STATUSES, type RedisErrorStatus } from '../errors/redis-error-answer';
import { LockOptionsError } from '../../errors';
import {
  DEFAULT_LEASE_TIME,
  DEFAULT_SHUTDOWN_TIMEOUT,
  DEFAULT_WAIT_TIME,
} from '../redis-lock.constants';
import type { RedisLockModuleOptions } from './redis-lock-options.interface';

/** Module options after validation, with defaults filled in. */
export interface ResolvedModuleOptions {
  redis: RedisOptions | string | undefined;
  cluster: ClusterConfig | undefined;
  client: Redis | Cluster | undefined;
  store: 'memory' | MemoryLockStore | undefined;
  keyPrefix: string;
  leaseTime: number;
  waitTime: number;
  fencing: boolean;
  onLockLost: LockLostPolicy;
  shutdownTimeout: number;
  checkOnStartup: StartupCheck;
  busyStatus: BusyStatus;
  redisErrorStatus: RedisErrorStatus;
  exposeKeys: boolean;
  syncReplicas: number;
  syncTimeout: number;
  fairQueueTimeout: number;
}

/**
 * Default of `fairQueueTimeout`, ms: a waiter that died keeps later ones waiting this long
 * past its turn at most. Redisson's 5 minutes suit threads that retry at once; here a live
 * waiter comes back within ms of its turn (notice, or its wait timer), so 5 s spares a queue
 * behind a crashed process minutes of standstill while a live but slow waiter (an event loop
 * stalled by GC) still keeps its place.
 */
export const DEFAULT_FAIR_QUEUE_TIMEOUT = 5_000;

/** Default of `syncTimeout`: how long WAIT waits for replicas, ms. */
export const DEFAULT_SYNC_TIMEOUT = 1_000;

/** What the module does when Redis cannot be reached at startup. */
export type StartupCheck = 'fail' | 'warn' | 'off';

const KNOWN_OPTIONS = [
  ...SOURCE_OPTIONS,
  'keyPrefix',
  'leaseTime',
  'waitTime',
  'fencing',
  'onLockLost',
  'shutdownTimeout',
  'checkOnStartup',
  'busyStatus',
  'redisErrorStatus',
  'exposeKeys',
  'syncReplicas',
  'syncTimeout',
  'fairQueueTimeout',
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
  assertConnectionSource(given);
  const o = given as RedisLockModuleOptions;
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
  const tag = hashTagProblem(keyPrefix);
  if (tag !== undefined) {
    throw new LockOptionsError('keyPrefix', hashTagMessage(describe(keyPrefix), tag));
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
  const redisErrorStatus = o.redisErrorStatus ?? 503;
  if (!REDIS_ERROR_STATUSES.includes(redisErrorStatus)) {
    throw new LockOptionsError(
      'redisErrorStatus',
      `expected 500, 502, 503 or 504, got ${describe(redisErrorStatus)}.`,
    );
  }
  const exposeKeys = o.exposeKeys ?? false;
  assertBoolean(exposeKeys, 'exposeKeys');
  const syncReplicas = o.syncReplicas ?? 0;
  assertSyncReplicas(syncReplicas);
  if (syncReplicas > 0 && o.store !== undefined) throw noReplicasError();
  const syncTimeout = o.syncTimeout ?? DEFAULT_SYNC_TIMEOUT;
  if (!Number.isInteger(syncTimeout) || syncTimeout < 1 || syncTimeout > 60_000) {
    throw new LockOptionsError(
      'syncTimeout',
      `expected a whole number of ms from 1 to 60000, got ${describe(syncTimeout)}.`,
    );
  }
  const fairQueueTimeout = o.fairQueueTimeout ?? DEFAULT_FAIR_QUEUE_TIMEOUT;
  if (!Number.isInteger(fairQueueTimeout) || fairQueueTimeout < 100 || fairQueueTimeout > 600_000) {
    throw new LockOptionsError(
      'fairQueueTimeout',
      `expected a whole number of ms from 100 to 600000, got ${describe(fairQueueTimeout)}.`,
    );
  }
  return {
    fairQueueTimeout,
    syncReplicas,
    syncTimeout,
    checkOnStartup,
    busyStatus,
    redisErrorStatus,
    exposeKeys,
    redis: o.redis,
    cluster: o.cluster,
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
