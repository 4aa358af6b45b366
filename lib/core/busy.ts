import {
  LockAcquireTimeoutError,
  ReplicaSyncError,
  type LockHolder,
  type LockRedisError,
} from '../errors';
import { hasPort, type LockStore, type LockTarget } from '../store';
import { now } from '../time/clock';
import { TIMED_OUT, within } from '../time/time-limit';

/** How long a busy caller's error waits for the lookup of the lock's holder, ms. */
export const HOLDER_LOOKUP_TIMEOUT = 250;

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
  holder?: LockHolder,
): LockAcquireTimeoutError {
  const left = busy.leaseEnds === undefined ? NaN : Math.max(0, busy.leaseEnds - now());
  return new LockAcquireTimeoutError(
    key,
    waitTime,
    heldByThisProcess,
    Number.isFinite(left) ? Math.min(left, typicalHold ?? Infinity) : undefined,
    holder,
  );
}

/**
 * The registered process holding `target` (see ClientRegistryPort), looked up once a wait has
 * ended: at most HOLDER_LOOKUP_TIMEOUT ms, undefined when the store keeps no registry, the
 * holder is not registered, or the lookup fails or takes longer.
 */
export async function lookUpHolder(
  store: LockStore,
  target: LockTarget,
): Promise<LockHolder | undefined> {
  if (!hasPort(store, 'clientRegistry')) return undefined;
  try {
    const found = await within(store.holderOf(target), HOLDER_LOOKUP_TIMEOUT);
    if (found === TIMED_OUT || found === undefined) return undefined;
    return { app: found.app, host: found.host, pid: found.pid };
  } catch {
    return undefined;
  }
}
