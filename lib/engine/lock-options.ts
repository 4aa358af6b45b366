import { LockOptionsError } from '../lock.errors';
import type { LockLostPolicy } from './lock-engine';

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
}

/** Lock options after defaults and validation. */
export interface ResolvedLockOptions {
  waitTime: number;
  /** The lease to set; with `watchdog` it is the module's lease and gets renewed. */
  leaseTime: number;
  watchdog: boolean;
  signal: AbortSignal | undefined;
}

/** Smallest lease accepted: the watchdog renews every third of it. */
export const MIN_LEASE_TIME = 30;
/** Longest finite wait or lease, in ms: what a Node.js timer can hold (2^31-1, about 24.8 days). */
export const MAX_TIMER_DELAY = 2 ** 31 - 1;

/** Per-call options of acquire and tryAcquire. */
export const LOCK_OPTION_NAMES: readonly string[] = ['waitTime', 'leaseTime', 'signal'];
/** Per-call options of run. */
export const RUN_OPTION_NAMES: readonly string[] = [...LOCK_OPTION_NAMES, 'onLockLost'];

/** Checks a wait time: a number of ms from 0 to MAX_TIMER_DELAY, or Infinity. */
export function assertWaitTime(value: unknown, option = 'waitTime'): asserts value is number {
  if (
    typeof value !== 'number' ||
    Number.isNaN(value) ||
    value < 0 ||
    (value > MAX_TIMER_DELAY && value !== Infinity)
  ) {
    throw new LockOptionsError(
      option,
      `expected a number of milliseconds >= 0 and <= 2^31-1 (about 24.8 days), or Infinity to wait forever, got ${describe(value)}.`,
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

/** The error for an option name that is not in `known`, suggesting a near miss (`waittime`). */
export function unknownOption(name: string, known: readonly string[]): LockOptionsError {
  const near = known.find((option) => option.toLowerCase() === name.toLowerCase());
  return new LockOptionsError(
    name,
    `unknown option${near ? `; did you mean "${near}"?` : `. Known options: ${known.join(', ')}.`}`,
  );
}

/** Checks a lease: a whole number of ms from MIN_LEASE_TIME to MAX_TIMER_DELAY (its expiry is a timer). */
export function assertLeaseTime(value: unknown, option = 'leaseTime'): asserts value is number {
  if (
    typeof value !== 'number' ||
    !Number.isInteger(value) ||
    value < MIN_LEASE_TIME ||
    value > MAX_TIMER_DELAY
  ) {
    throw new LockOptionsError(
      option,
      `expected a whole number of milliseconds from ${MIN_LEASE_TIME} to 2^31-1, got ${describe(value)}.`,
    );
  }
}

/** Validates per-call options and fills in the defaults. */
export function resolveLockOptions(
  options: LockOptions | undefined,
  defaults: { waitTime: number; leaseTime: number },
  known: readonly string[] = LOCK_OPTION_NAMES,
): ResolvedLockOptions {
  if (options === undefined) {
    return {
      waitTime: defaults.waitTime,
      leaseTime: defaults.leaseTime,
      watchdog: true,
      signal: undefined,
    };
  }
  if (typeof options !== 'object' || options === null) {
    throw new LockOptionsError('options', `expected an object, got ${describe(options)}.`);
  }
  for (const name of Object.keys(options)) {
    if (!known.includes(name)) throw unknownOption(name, known);
  }
  const { waitTime = defaults.waitTime, leaseTime, signal } = options;
  assertWaitTime(waitTime);
  if (leaseTime !== undefined) assertLeaseTime(leaseTime);
  if (signal !== undefined && !(signal instanceof AbortSignal)) {
    throw new LockOptionsError('signal', `expected an AbortSignal, got ${describe(signal)}.`);
  }
  return {
    waitTime,
    leaseTime: leaseTime ?? defaults.leaseTime,
    watchdog: leaseTime === undefined,
    signal,
  };
}

/** A short, safe description of a value for error messages. */
export function describe(value: unknown): string {
  if (typeof value === 'string') {
    return value.length > 60 ? `a string of length ${value.length}` : JSON.stringify(value);
  }
  if (typeof value === 'number' || typeof value === 'bigint' || typeof value === 'boolean') {
    return String(value);
  }
  if (value === null || value === undefined) return String(value);
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'function') return 'a function';
  return `a ${typeof value}`;
}
