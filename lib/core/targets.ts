import { LockKeyError, LockOptionsError } from '../errors';
import type { LockTarget } from '../store';
import { lockKind, MULTI_KIND, PERMIT_KIND, PLAIN_KIND } from './kinds';
import type { LockMode } from './options/lock-options';
import { assertKnownOptions, describe, lockName } from './options/validate';

export type { LockMode };

/** One lock key, or the keys of a multi-lock (all or none). */
export type LockKeys = string | readonly string[];

/** Most keys a multi-lock takes at once. */
export const MAX_GROUP_KEYS = 64;

/** The target of a plain, fair, read or write lock on `key`. */
export function lockTarget(
  prefix: string,
  key: string,
  mode: LockMode | undefined,
  fair: boolean,
): LockTarget {
  const name = lockName(prefix, key);
  return { kind: lockKind(mode, fair).id, key, name };
}

/** A multi-lock's target, with its keys as given (one per name). */
export interface GroupTarget extends LockTarget {
  readonly keys: readonly string[];
}

/** The keys of a target, one per store name (a single lock's: its key). */
export function targetKeys(target: LockTarget): readonly string[] {
  return (target as Partial<GroupTarget>).keys ?? [target.key];
}

/**
 * The target of a multi-lock on `keys` (LockKeyError unless a non-empty array of at most
 * MAX_GROUP_KEYS valid keys), duplicates counted once. A single distinct key is a plain lock.
 */
export function groupTarget(prefix: string, keys: readonly unknown[]): LockTarget {
  if (keys.length === 0) throw new LockKeyError('A multi-lock needs at least one key, got [].');
  if (keys.length > MAX_GROUP_KEYS) {
    throw new LockKeyError(
      `A multi-lock takes at most ${MAX_GROUP_KEYS} keys at once, got ${keys.length}.`,
    );
  }
  const distinct = [...new Set(keys)];
  const names = distinct.map((key) => lockName(prefix, key));
  const key = (distinct as string[]).join(', ');
  if (distinct.length === 1) return { kind: PLAIN_KIND.id, key, name: names[0] };
  const group: GroupTarget = {
    kind: MULTI_KIND.id,
    key,
    name: names[0],
    names,
    keys: distinct as string[],
  };
  return group;
}

/** The target of a permit of semaphore `key` (LockOptionsError unless `{ permits }` is valid). */
export function permitTarget(prefix: string, key: string, options: unknown): LockTarget {
  if (typeof options !== 'object' || options === null) {
    throw new LockOptionsError('options', `expected { permits }, got ${describe(options)}.`);
  }
  assertKnownOptions(options, ['permits']);
  const { permits } = options as { permits?: unknown };
  assertPermits(permits);
  return checkedPermitTarget(prefix, key, permits);
}

/** The target of a permit of semaphore `key`, `permits` checked already. */
export function checkedPermitTarget(prefix: string, key: string, permits: number): LockTarget {
  return { kind: PERMIT_KIND.id, key, name: lockName(prefix, key), permits };
}

/**
 * The target of a lock call on `keys`: a plain, fair or read-write lock, or a multi-lock (an
 * array; plain locks only).
 */
export function callTarget(
  prefix: string,
  keys: LockKeys,
  mode: LockMode | undefined,
  fair: boolean,
): LockTarget {
  if (!Array.isArray(keys)) return lockTarget(prefix, keys as string, mode, fair);
  if (mode !== undefined || fair) {
    throw new LockOptionsError(
      fair ? 'fair' : 'mode',
      'a multi-lock (a list of keys) takes plain locks only.',
    );
  }
  return groupTarget(prefix, keys);
}

/** Checks a semaphore's `permits`: a whole number from 1 to 1 000 000. */
export function assertPermits(value: unknown): asserts value is number {
  if (!Number.isInteger(value) || (value as number) < 1 || (value as number) > 1_000_000) {
    throw new LockOptionsError(
      'permits',
      `expected a whole number of permits from 1 to 1000000, got ${describe(value)}.`,
    );
  }
}
