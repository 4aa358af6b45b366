import {
  assertKnownOptions,
  booleanCheck,
  checkOptions,
  describe,
  ENGINE_OPTIONS,
  millisecondsCheck,
  oneOfCheck,
  optionDefaults,
  optionNames,
  resolveOptions,
  type Check,
  type OptionTableOf,
  type ResolvedOptions,
} from '../../core';
import type { BusyStatus } from '../errors/lock-error-answer';
import { noReplicasError } from '../../store';
import { REDIS_ERROR_STATUSES } from '../errors/redis-error-answer';
import { LockOptionsError } from '../../errors';
import { assertOneSource, isUserStore, SOURCE_OPTIONS } from './connection-source.validation';
import type { RedisLockModuleOptions } from './redis-lock-options.interface';

/** What the module does when Redis cannot be reached at startup. */
export type StartupCheckMode = 'fail' | 'warn' | 'off';

/** One of some HTTP statuses (`expected 409, 423 or 503`). */
function statusCheck<const T extends number>(allowed: readonly T[]): Check<T> {
  const list = `${allowed.slice(0, -1).join(', ')} or ${allowed.at(-1)}`;
  return (value, option) => {
    if (!allowed.includes(value as T)) {
      throw new LockOptionsError(option, `expected ${list}, got ${describe(value)}.`);
    }
    return value as T;
  };
}

const shutdownTimeoutCheck: Check<number> = (value, option) => {
  if (typeof value !== 'number' || !(value >= 0) || !Number.isFinite(value)) {
    throw new LockOptionsError(
      option,
      `expected a finite number of milliseconds >= 0, got ${describe(value)}.`,
    );
  }
  return value;
};

const appNameCheck: Check<string> = (value, option) => {
  if (typeof value !== 'string' || value.trim() === '' || value.length > 200) {
    throw new LockOptionsError(
      option,
      `expected a non-empty string of at most 200 characters, got ${describe(value)}.`,
    );
  }
  return value;
};

/**
 * The module's option table: each option of `forRoot` with its check and default, in the order
 * they are checked (after the source: exactly one of `redis`, `cluster`, `client`, `store`).
 * The engine's options and their defaults come from the engine's table (ENGINE_OPTIONS).
 */
export const MODULE_OPTIONS = {
  ...SOURCE_OPTIONS,
  keyPrefix: ENGINE_OPTIONS.keyPrefix,
  leaseTime: ENGINE_OPTIONS.leaseTime,
  waitTime: ENGINE_OPTIONS.waitTime,
  fencing: ENGINE_OPTIONS.fencing,
  onLockLost: ENGINE_OPTIONS.onLockLost,
  shutdownTimeout: { check: shutdownTimeoutCheck, default: 5_000 },
  checkOnStartup: { check: oneOfCheck<StartupCheckMode>(['fail', 'warn', 'off']), default: 'fail' },
  busyStatus: { check: statusCheck<BusyStatus>([409, 423, 503]), default: 409 },
  redisErrorStatus: { check: statusCheck(REDIS_ERROR_STATUSES), default: 503 },
  exposeKeys: { check: booleanCheck, default: false },
  tracing: { check: booleanCheck, default: false },
  syncReplicas: ENGINE_OPTIONS.syncReplicas,
  syncTimeout: { check: millisecondsCheck(1, 60_000), default: 1_000 },
  fairQueueTimeout: ENGINE_OPTIONS.fairQueueTimeout,
  maxHold: ENGINE_OPTIONS.maxHold,
  appName: { check: appNameCheck },
  clientRegistry: { check: booleanCheck, default: true },
} as const satisfies OptionTableOf<RedisLockModuleOptions>;

/** How the module is registered (`forRoot`'s extras): not part of the resolved options. */
export interface ModuleExtras {
  /** Register the module globally. Default true. */
  isGlobal?: boolean;
  /** Map busy locks, bad keys and Redis failures to HTTP/RPC/GraphQL answers. Default true. */
  mapErrors?: boolean;
}

/** The table of `forRoot`'s extras. */
export const MODULE_EXTRAS = {
  isGlobal: { check: booleanCheck, default: true },
  mapErrors: { check: booleanCheck, default: true },
} as const satisfies OptionTableOf<ModuleExtras>;

/** The defaults of `forRoot`'s extras (ConfigurableModuleBuilder's `setExtras`). */
export const EXTRAS_DEFAULTS = optionDefaults(MODULE_EXTRAS);

/** Module options after validation, with defaults filled in. */
export type ResolvedModuleOptions = ResolvedOptions<typeof MODULE_OPTIONS>;

/** The names `forRoot` knows: the options and the extras. */
const KNOWN_NAMES = [...optionNames(MODULE_OPTIONS), ...optionNames(MODULE_EXTRAS)];

/** forTesting's own defaults: a busy lock fails within a test's time limit, app.close() is quick. */
export const TESTING_DEFAULTS = {
  waitTime: 1_000,
  shutdownTimeout: 0,
} as const satisfies RedisLockModuleOptions;

/** Checks that the module was given an options object at all (`forRoot()` or a factory). */
export function assertOptionsObject(options: unknown): asserts options is object {
  if (typeof options !== 'object' || options === null || Array.isArray(options)) {
    throw new LockOptionsError(
      'options',
      `RedisLockModule needs an options object such as { redis: 'redis://127.0.0.1:6379' }, got ${describe(options)}.`,
    );
  }
}

/** Checks `forRoot`'s extras, when given (the module builder takes them out of the options). */
export function assertExtras(options: ModuleExtras): void {
  checkOptions(MODULE_EXTRAS, { isGlobal: options.isGlobal, mapErrors: options.mapErrors });
}

/**
 * Validates module options (throwing LockOptionsError naming the option: unknown names, then
 * the source, then each option in table order, then the rules between options) and fills in
 * the defaults.
 */
export function resolveModuleOptions(options: unknown): ResolvedModuleOptions {
  assertOptionsObject(options);
  const given = options as Record<string, unknown>;
  assertKnownOptions(given, KNOWN_NAMES);
  assertOneSource(given);
  const resolved = resolveOptions(MODULE_OPTIONS, given, KNOWN_NAMES);
  assertExtras(given);
  if (resolved.syncReplicas > 0 && resolved.store !== undefined && !isUserStore(resolved.store))
    throw noReplicasError();
  return resolved;
}
