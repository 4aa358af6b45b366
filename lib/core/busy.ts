import { LockAcquireTimeoutError, ReplicaSyncError, type LockRedisError } from '../errors';
import { now } from '../time/clock';

/** Delay before trying again after a grant was undone for want of replica acknowledgements, ms. */
const SYNC_RETRY_DELAY = 100;

/** A lock still busy after the wait: when its holder's lease ends, as last seen. */
export interface Busy {
  leaseEnds: number | undefined;
  /** The last grant undone for want of replica acknowledgements (syncReplicas). */
  unsynced?: ReplicaSyncError;
  /** Why the last try got no answer (the store unreachable), unless an answer came after it. */
  failure?: LockRedisError;
  /** Store attempts the wait made (counted where the wait began with it set, for its trace). */
  attempts?: number;
}

/** Counts one store attempt of the wait `busy` stands for. */
export function counted(busy: Busy): void {
  if (busy.attempts !== undefined) busy.attempts++;
}

/**
 * A grant the store undid because too few replicas acknowledged it: remembered on `busy` and
 * answered as "busy, try again in SYNC_RETRY_DELAY ms" (the wait bounds the retries); any other
 * error is passed on.
 */
export function unsynced(error: unknown, busy: Busy): number {
  if (!(error instanceof ReplicaSyncError)) throw error;
  busy.unsynced = error;
  return SYNC_RETRY_DELAY;
}

/**
 * The error of a call still busy after its wait. Its `retryAfter` (ms) is the lock's typical
 * hold time in this process (see HoldTimes), bounded by the holder's remaining lease as last
 * seen; the lease alone before any hold was timed; none when the holder has no lease.
 */
export function busyError(
  key: string,
  waitTime: number,
  busy: Busy,
  heldByThisProcess: boolean,
  typicalHold: number | undefined,
): LockAcquireTimeoutError {
  const left = busy.leaseEnds === undefined ? NaN : Math.max(0, busy.leaseEnds - now());
  return new LockAcquireTimeoutError(
    key,
    waitTime,
    heldByThisProcess,
    Number.isFinite(left) ? Math.min(left, typicalHold ?? Infinity) : undefined,
  );
}
