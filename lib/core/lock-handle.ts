import type { LockMode } from './options/lock-options';

/**
 * A held lock, as returned by `acquire`/`tryAcquire` and passed to `run`'s callback.
 * `await using lock = await locks.acquire('k')` releases it at the end of the block.
 */
export interface LockHandle extends AsyncDisposable {
  /** The lock key, as given (without `keyPrefix`); a multi-lock's keys joined with ', '. */
  readonly key: string;
  /** Every key this handle holds: `[key]`, or a multi-lock's keys (duplicates once). */
  readonly keys: readonly string[];
  /** `'read'` or `'write'` for a read-write lock's hold; undefined for any other lock. */
  readonly mode: LockMode | undefined;
  /** Whether the lock was taken fairly (`fair: true`: in arrival order). */
  readonly fair: boolean;
  /**
   * Aborted, with a `LockLostError` as its reason, when the lock (a multi-lock: any member) is lost while held
   * (lease expired, key deleted, Redis restarted, released by shutdown while work ran). Pass it on to cancellable work.
   */
  readonly signal: AbortSignal;
  /**
   * A number that grows with every outermost acquisition of this lock name, for rejecting
   * writes from an owner that lost the lock (see docs/redis-layout.md, "Fencing").
   * `undefined` unless fencing was asked for (module or per-call option `fencing: true`).
   */
  readonly fencingToken: number | undefined;
  /** How deep this hold is nested in the current call chain: 1 for the outermost. */
  readonly depth: number;
  /**
   * Releases this hold. The outermost release frees the lock in Redis; a nested one only
   * leaves its level. Rejects with `LockLostError` when the lock was lost while held and
   * with `LockNotHeldError` when this handle was already released.
   */
  release(): Promise<void>;
}

/**
 * A permit of a semaphore, as returned by `RedisSemaphore.acquire`/`tryAcquire` and passed to
 * its `run` callback. `await using permit = await exports.acquire()` returns it at block end.
 */
export interface PermitHandle extends AsyncDisposable {
  /** The semaphore's key, as given (without `keyPrefix`). */
  readonly key: string;
  /** Aborted, with a `LockLostError` as its reason, when the permit's lease ran out while held. */
  readonly signal: AbortSignal;
  /** How deep this permit is re-entered in the current call chain: 1 for the outermost. */
  readonly depth: number;
  /** Returns the permit (the outermost release), or leaves a nested level. */
  release(): Promise<void>;
}
