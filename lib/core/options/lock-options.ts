import { LockOptionsError } from '../../errors';
import {
  booleanCheck,
  holdAtLeastCheck,
  leaseTimeCheck,
  maxHoldCheck,
  lostPolicyCheck,
  oneOfCheck,
  signalCheck,
  syncReplicasCheck,
  waitTimeCheck,
} from './checks';
import type { ResolvedEngineOptions } from './engine-options';
import type { LockLostPolicy } from './lost-policy';
import {
  checkOptions,
  withoutOptions,
  type CheckedOptions,
  type OptionTable,
  type OptionTableOf,
} from './option-table';
import { describe } from './validate';

export type { LockLostPolicy };

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
  /**
   * Keep the lock at least this long (ms) after it was acquired: released earlier, it stays held
   * in the store, unrenewed, until then and expires without a release notice, so an instance
   * whose scheduled tick fires late finds it busy. Plain (and fenced) locks only; at most an
   * explicit `leaseTime`. Default 0 (released at once).
   */
  holdAtLeast?: number;
  /**
   * The watchdog stops renewing a hold older than this (ms); when its lease then runs out the
   * holder is told (`LockLostError`), as for any lost lock: caps work stuck on a promise that
   * never settles. Not with an explicit `leaseTime` (which already ends the hold). Default: the
   * module's `maxHold` (Infinity).
   */
  maxHold?: number;
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

/** The option table of `acquire` and `tryAcquire`: their defaults are the engine's. */
export const LOCK_OPTIONS = {
  waitTime: { check: waitTimeCheck },
  leaseTime: { check: leaseTimeCheck },
  signal: { check: signalCheck },
  fencing: { check: booleanCheck },
  syncReplicas: { check: syncReplicasCheck },
  mode: { check: oneOfCheck(['read', 'write']) },
  fair: { check: booleanCheck, default: false },
  holdAtLeast: { check: holdAtLeastCheck, default: 0 },
  maxHold: { check: maxHoldCheck },
} as const satisfies OptionTableOf<LockOptions>;

/** The option table of `run`: a lock's, and what to do when busy or lost. */
export const RUN_OPTIONS = {
  ...LOCK_OPTIONS,
  onLockLost: { check: lostPolicyCheck },
  onBusy: { check: oneOfCheck(['throw', 'skip']), default: 'throw' },
} as const satisfies OptionTableOf<RunOptions>;

/** The options a permit of a semaphore does not take. */
const LOCK_ONLY = ['mode', 'fair', 'fencing', 'holdAtLeast'] as const;
/** The option table of a permit's acquire and tryAcquire. */
export const PERMIT_OPTIONS = withoutOptions(LOCK_OPTIONS, LOCK_ONLY);
/** The option table of a semaphore's run and of `@Semaphore`. */
export const PERMIT_RUN_OPTIONS = withoutOptions(RUN_OPTIONS, LOCK_ONLY);

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
  /** Ms from the grant the lock stays held however early it is released (0: none). */
  readonly holdAtLeast: number;
  /** Age (ms from the grant's request) past which the watchdog stops renewing the hold. */
  readonly maxHold: number;
}

/** The engine-wide defaults that per-call options fill in. */
export type LockDefaults = Pick<
  ResolvedEngineOptions,
  'waitTime' | 'leaseTime' | 'fencing' | 'syncReplicas' | 'maxHold'
>;

/** Per-call options as given and checked (run's: with the busy and lost policies). */
export type CheckedRunOptions = CheckedOptions<typeof RUN_OPTIONS>;

/**
 * Checks per-call options against `table` (by default a lock's): each value, then the rules
 * between them. Returns the options given, checked, without defaults.
 */
export function checkLockOptions(
  options: unknown,
  table: OptionTable = LOCK_OPTIONS,
): CheckedRunOptions {
  if (typeof options !== 'object' || options === null) {
    throw new LockOptionsError('options', `expected an object, got ${describe(options)}.`);
  }
  const checked = checkOptions(table, options) as CheckedRunOptions;
  const { mode, fair } = checked;
  if (fair === true && mode !== undefined) {
    throw new LockOptionsError(
      'fair',
      'a fair lock is a plain lock: give `fair` or `mode`, not both.',
    );
  }
  if (checked.fencing === true && (fair === true || mode !== undefined)) {
    throw new LockOptionsError(
      'fencing',
      'fencing tokens are issued for plain locks only (Redisson has no fenced fair or read-write lock).',
    );
  }
  checkHoldTimes(checked);
  return checked;
}

/** The rules of `holdAtLeast` and `maxHold` against the other options given. */
function checkHoldTimes({ holdAtLeast, maxHold, leaseTime, mode, fair }: CheckedRunOptions): void {
  if (holdAtLeast !== undefined && holdAtLeast > 0) {
    if (fair === true || mode !== undefined) {
      throw new LockOptionsError(
        'holdAtLeast',
        `plain locks only: a ${fair === true ? 'fair' : 'read-write'} lock is released at once.`,
      );
    }
    if (leaseTime !== undefined && holdAtLeast > leaseTime) {
      throw new LockOptionsError(
        'holdAtLeast',
        `is longer than the explicit leaseTime (${holdAtLeast} > ${leaseTime} ms): the lock expires at the end of its lease.`,
      );
    }
  }
  if (maxHold !== undefined && leaseTime !== undefined) {
    throw new LockOptionsError(
      'maxHold',
      'caps how long the watchdog renews a hold; with an explicit leaseTime there is no watchdog and the lease already ends the hold: give one of them.',
    );
  }
}

/** Fills checked per-call options in with `defaults` (checks nothing). */
export function completeLockOptions(
  checked: CheckedRunOptions,
  defaults: LockDefaults,
  signal = checked.signal,
): ResolvedLockOptions {
  const { leaseTime, mode } = checked;
  const fair = checked.fair ?? LOCK_OPTIONS.fair.default;
  return {
    waitTime: checked.waitTime ?? defaults.waitTime,
    leaseTime: leaseTime ?? defaults.leaseTime,
    watchdog: leaseTime === undefined,
    signal,
    fencing: (checked.fencing ?? defaults.fencing) && !fair && mode === undefined,
    syncReplicas: checked.syncReplicas ?? defaults.syncReplicas,
    mode,
    fair,
    holdAtLeast: checked.holdAtLeast ?? LOCK_OPTIONS.holdAtLeast.default,
    maxHold: checked.maxHold ?? defaults.maxHold,
  };
}

/** Validates per-call options (against `table`, a lock's by default) and fills in the defaults. */
export function resolveLockOptions(
  options: LockOptions | undefined,
  defaults: LockDefaults,
  table: OptionTable = LOCK_OPTIONS,
): ResolvedLockOptions {
  return completeLockOptions(
    options === undefined ? NOTHING_GIVEN : checkLockOptions(options, table),
    defaults,
  );
}

const NOTHING_GIVEN: CheckedRunOptions = Object.freeze({});
