import type { LockLostError } from '../../errors';

/** What to do when a lock was lost while `run`'s function (or a `@Locked` method) ran. */
export type LockLostPolicy = 'throw' | 'ignore' | ((error: LockLostError) => void);

/**
 * Applies an `onLockLost` policy to a loss found when locked work ended: throws the error
 * (`'throw'`), ignores it, or hands it to the callback (whose own error propagates).
 */
export function applyLostPolicy(error: LockLostError, policy: LockLostPolicy): void {
  if (policy === 'throw') throw error;
  if (typeof policy === 'function') policy(error);
}
