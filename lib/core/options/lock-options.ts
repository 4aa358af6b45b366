import type { LockLostError } from '../../errors';
import { LockOptionsError } from '../../errors';
import {
  assertBoolean,
  assertKnownOptions,
  assertLeaseTime,
  assertOneOf,
  assertWaitTime,
  describe,
} from './validate';

/** What to do when a lock was lost while `run`'s function (or a `@Locked` method) ran. */
export type LockLostPolicy = 'throw' | 'ignore' | ((error: LockLostError) => void);

/** The mode of a read-write lock hold: many readers, or one writer. */
export type LockMode = 'read' | 'write';

/** What `run` and `@Locked` do when the lock is still busy after the wait. */
export type BusyPolicy = 'throw' | 'skip';

/** Per-call options of `acquire`, `tryAcquire`, `run` and `@Locked`. */
export interface LockOptions {
  /**
   * How long to wait for a busy lock, in ms. `0` fails at once, `Infinity` waits forever.
   * Defaults to the module's `waitTime` (`tryAcquire`: 0).
   */
  waitTime?: number;
  /**
   * An explicit lease in ms. The lock expires after it even if still held, and the watchdog
   * does not renew it (as in Redisson). Omit it to have the watchdog keep the lock alive.
   */
  leaseTime?: number;
  /** Cancels the wait: the call rejects with the signal's reason and leaves no lock behind. */
  signal?: AbortSignal;
  /** Issue a fencing token for this acquisition (Redisson's RFencedLock). Default: the module's `fencing`. */
  fencing?: boolean;
  /**
   * How many replicas must acknowledge the grant (Redis WAIT) before the acquire succeeds; a
   * grant fewer acknowledged is released and tried again within the wait. Default: the
   * module's `syncReplicas` (0: no wait for replicas).
   */
  syncReplicas?: number;
  /**
   * Take the read or the write lock of a read-write lock (Redisson's RReadWriteLock) of this
   * name: many readers at once, or one writer. Omit it for a plain lock, which is a different
   * lock than a read-write lock of the same name (they exclude each other in Redis: use one kind
   * per name).
   */
  mode?: LockMode;
  /**
   * Grant the lock in arrival order across processes (Redisson's RFairLock). A plain lock only:
   * not with `mode`.
   */
  fair?: boolean;
}

/** Options of `run` and `@Locked`. */
export interface RunOptions extends LockOptions {
  /**
   * When the lock was lost while the function ran: `'throw'` (default) rejects with
   * `LockLostError` after the function settled, `'ignore'` returns its result anyway, a
   * callback is called with the error (and the result is returned unless it throws).
   */
  onLockLost?: LockLostPolicy;
  /**
   * When the lock is still busy after `waitTime`: `'throw'` (default) rejects with
   * `LockAcquireTimeoutError`; `'skip'` resolves `undefined` without running the function.
   */
  onBusy?: BusyPolicy;
}

/** Per-call options of acquire and tryAcquire. */
const LOCK_OPTION_NAMES: readonly string[] = [
  'waitTime',
  'leaseTime',
  'signal',
  'fencing',
  'syncReplicas',
  'mode',
  'fair',
];
/** Per-call options of run. */
export const RUN_OPTION_NAMES: readonly string[] = [...LOCK_OPTION_NAMES, 'onLockLost', 'onBusy'];
/** Options of `@Locked`: run's, less the signal (a decorator has none to give), plus the key. */
export const LOCKED_OPTION_NAMES: readonly string[] = [
  'key',
  ...RUN_OPTION_NAMES.filter((name) => name !== 'signal'),
];

/** Lock options after defaults and validation. */
export interface ResolvedLockOptions {
  readonly waitTime: number;
  /** The lease to set; with `watchdog` it is the module's lease and gets renewed. */
  readonly leaseTime: number;
  readonly watchdog: boolean;
  readonly signal: AbortSignal | undefined;
  readonly fencing: boolean;
  readonly syncReplicas: number;
  readonly mode: LockMode | undefined;
  readonly fair: boolean;
}

/** Module-wide defaults of per-call options. */
export interface LockDefaults {
  waitTime: number;
  leaseTime: number;
  fencing: boolean;
  /** Default 0. */
  syncReplicas?: number;
}

/** Most replicas `syncReplicas` may ask for (a sanity bound: Redis has no hard limit). */
export const MAX_SYNC_REPLICAS = 100;

/** Checks a `syncReplicas` count: a whole number from 0 to MAX_SYNC_REPLICAS. */
export function assertSyncReplicas(value: unknown): asserts value is number {
  if (!Number.isInteger(value) || (value as number) < 0 || (value as number) > MAX_SYNC_REPLICAS) {
    throw new LockOptionsError(
      'syncReplicas',
      `expected a whole number of replicas from 0 to ${MAX_SYNC_REPLICAS}, got ${describe(value)}.`,
    );
  }
}

/** Checks an `onLockLost` policy. */
export function assertLostPolicy(
  value: unknown,
  option = 'onLockLost',
): asserts value is LockLostPolicy {
  if (value !== 'throw' && value !== 'ignore' && typeof value !== 'function') {
    throw new LockOptionsError(
      option,
      `expected 'throw', 'ignore' or a function (error) => void, got ${describe(value)}.`,
    );
  }
}

/** Checks the per-call options that `run` adds to `LockOptions` (when given). */
export function assertRunPolicies(options: RunOptions): void {
  if (options.onLockLost !== undefined) assertLostPolicy(options.onLockLost);
  if (options.onBusy !== undefined) assertOneOf(options.onBusy, ['throw', 'skip'], 'onBusy');
}

/** Validates per-call options (names from `known`) and fills in the defaults. */
export function resolveLockOptions(
  options: LockOptions | undefined,
  defaults: LockDefaults,
  known: readonly string[] = LOCK_OPTION_NAMES,
): ResolvedLockOptions {
  if (options === undefined) {
    return {
      waitTime: defaults.waitTime,
      leaseTime: defaults.leaseTime,
      watchdog: true,
      signal: undefined,
      fencing: defaults.fencing,
      syncReplicas: defaults.syncReplicas ?? 0,
      mode: undefined,
      fair: false,
    };
  }
  if (typeof options !== 'object' || options === null) {
    throw new LockOptionsError('options', `expected an object, got ${describe(options)}.`);
  }
  assertKnownOptions(options, known);
  const { waitTime = defaults.waitTime, leaseTime, signal, fencing = defaults.fencing } = options;
  const syncReplicas = options.syncReplicas ?? defaults.syncReplicas ?? 0;
  assertSyncReplicas(syncReplicas);
  assertWaitTime(waitTime);
  if (leaseTime !== undefined) assertLeaseTime(leaseTime);
  if (signal !== undefined && !(signal instanceof AbortSignal)) {
    throw new LockOptionsError('signal', `expected an AbortSignal, got ${describe(signal)}.`);
  }
  assertBoolean(fencing, 'fencing');
  const { mode, fair = false } = options;
  if (mode !== undefined) assertOneOf(mode, ['read', 'write'], 'mode');
  assertBoolean(fair, 'fair');
  if (fair && mode !== undefined) {
    throw new LockOptionsError(
      'fair',
      'a fair lock is a plain lock: give `fair` or `mode`, not both.',
    );
  }
  if (options.fencing === true && (fair || mode !== undefined)) {
    throw new LockOptionsError(
      'fencing',
      'fencing tokens are issued for plain locks only (Redisson has no fenced fair or read-write lock).',
    );
  }
  return {
    waitTime,
    leaseTime: leaseTime ?? defaults.leaseTime,
    watchdog: leaseTime === undefined,
    signal,
    fencing: fencing && !fair && mode === undefined,
    syncReplicas,
    mode,
    fair,
  };
}
