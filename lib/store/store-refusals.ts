import { LockError, LockKeyError, LockOptionsError } from '../errors';
import type { LockTarget } from './lock-store';

/**
 * The error both stores give for a call on a name that holds another type of object: a lock
 * (plain, fair, read-write, a group's member) on a semaphore's name, a semaphore on a held
 * lock's name, or (on Redis, which answers WRONGTYPE) another program's key. A semaphore's key
 * stays when no permit is held, so its name stays taken.
 */
export function wrongKindError(key: string, cause?: unknown): LockKeyError {
  return new LockKeyError(
    `"${key}" already names another type of object in the store (a semaphore where a lock is ` +
      'asked for, a lock where a semaphore is, or a key of another program): give each its own key.',
    { cause },
  );
}

/** The error a store without replicas (the memory store) gives for `syncReplicas` above 0. */
export function noReplicasError(): LockOptionsError {
  return new LockOptionsError(
    'syncReplicas',
    'the memory store has no replicas to acknowledge a write: use 0 (the default) with it.',
  );
}

/**
 * The error a store gives for a capability port's operation (ports.ts) on a target of a kind
 * that has none (a `leave` of a plain lock, an `available` of a lock).
 */
export function unsupportedError(target: LockTarget, operation: string): LockError {
  return new LockError(
    `"${target.key}": ${operation}() is not an operation of a ${target.kind} hold.`,
  );
}
