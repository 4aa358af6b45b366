import { LockOptionsError } from '../../errors';
import type { Check } from './option-table';
import {
  assertBoolean,
  assertLeaseTime,
  assertOneOf,
  assertWaitTime,
  describe,
  hashTagMessage,
  hashTagProblem,
  MAX_KEY_BYTES,
} from './validate';
import type { LockLostPolicy } from './lost-policy';
import { MAX_TIMER_DELAY } from '../../time/time-limit';

/** Most replicas `syncReplicas` may ask for (a sanity bound: Redis has no hard limit). */
export const MAX_SYNC_REPLICAS = 100;

/** A wait: ms from 0 to 2^31-1, or Infinity. */
export const waitTimeCheck: Check<number> = (value, option) => {
  assertWaitTime(value, option);
  return value;
};

/** A lease: whole ms from 30 to 2^31-1. */
export const leaseTimeCheck: Check<number> = (value, option) => {
  assertLeaseTime(value, option);
  return value;
};

/** `holdAtLeast`: whole ms from 0 (none) to 2^31-1 (its end is a timer in the memory store). */
export const holdAtLeastCheck: Check<number> = millisecondsCheck(0, MAX_TIMER_DELAY);

/** `maxHold`: whole ms from 1 to 2^31-1, or Infinity (no cap). */
export const maxHoldCheck: Check<number> = (value, option) => {
  if (
    value !== Infinity &&
    !(Number.isInteger(value) && (value as number) >= 1 && (value as number) <= MAX_TIMER_DELAY)
  ) {
    throw new LockOptionsError(
      option,
      `expected a whole number of ms from 1 to 2^31-1, or Infinity for no cap, got ${describe(value)}.`,
    );
  }
  return value as number;
};

/** true or false. */
export const booleanCheck: Check<boolean> = (value, option) => {
  assertBoolean(value, option);
  return value;
};

/** One of `allowed`. */
export function oneOfCheck<const T extends string>(allowed: readonly T[]): Check<T> {
  return (value, option) => {
    assertOneOf(value, allowed, option);
    return value;
  };
}

/** A whole number of ms from `min` to `max`. */
export function millisecondsCheck(min: number, max: number): Check<number> {
  return (value, option) => {
    if (!Number.isInteger(value) || (value as number) < min || (value as number) > max) {
      throw new LockOptionsError(
        option,
        `expected a whole number of ms from ${min} to ${max}, got ${describe(value)}.`,
      );
    }
    return value as number;
  };
}

/** A replica count: a whole number from 0 to MAX_SYNC_REPLICAS. */
export const syncReplicasCheck: Check<number> = (value, option) => {
  if (!Number.isInteger(value) || (value as number) < 0 || (value as number) > MAX_SYNC_REPLICAS) {
    throw new LockOptionsError(
      option,
      `expected a whole number of replicas from 0 to ${MAX_SYNC_REPLICAS}, got ${describe(value)}.`,
    );
  }
  return value as number;
};

/** An AbortSignal. */
export const signalCheck: Check<AbortSignal> = (value, option) => {
  if (!(value instanceof AbortSignal)) {
    throw new LockOptionsError(option, `expected an AbortSignal, got ${describe(value)}.`);
  }
  return value;
};

/** An `onLockLost` policy: 'throw', 'ignore' or a callback. */
export const lostPolicyCheck: Check<LockLostPolicy> = (value, option) => {
  if (value !== 'throw' && value !== 'ignore' && typeof value !== 'function') {
    throw new LockOptionsError(
      option,
      `expected 'throw', 'ignore' or a function (error) => void, got ${describe(value)}.`,
    );
  }
  return value as LockLostPolicy;
};

/**
 * A `keyPrefix`: a well-formed string whose braces keep a lock's keys in one cluster slot and
 * that leaves room for a key within MAX_KEY_BYTES.
 */
export const keyPrefixCheck: Check<string> = (value, option) => {
  if (typeof value !== 'string') {
    throw new LockOptionsError(option, `expected a string, got ${describe(value)}.`);
  }
  if (!value.isWellFormed()) {
    throw new LockOptionsError(
      option,
      `contains a lone UTF-16 surrogate, which is not valid unicode (Redis would store it as U+FFFD), got ${describe(value)}.`,
    );
  }
  const tag = hashTagProblem(value);
  if (tag !== undefined) throw new LockOptionsError(option, hashTagMessage(describe(value), tag));
  if (Buffer.byteLength(value) >= MAX_KEY_BYTES) {
    throw new LockOptionsError(
      option,
      `is ${Buffer.byteLength(value)} bytes long and leaves no room for a key: a lock name (keyPrefix + key) is limited to ${MAX_KEY_BYTES} bytes.`,
    );
  }
  return value;
};

/** Accepts the value as it is: an option another step checks (a key template when it compiles). */
export function checkedElsewhere<T>(): Check<T> {
  return (value) => value as T;
}
