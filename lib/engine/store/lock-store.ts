import { LockRedisError } from '../../lock.errors';

/** One acquire attempt of lock `name` by `owner`. */
export interface AcquireRequest {
  /** The lock key as the user gave it (for error messages). */
  readonly key: string;
  /** The store's name of the lock (keyPrefix + key). */
  readonly name: string;
  /** The owner id, unique to this attempt: `<client uuid>:<sequence number>`. */
  readonly owner: string;
  /** Lease in ms. */
  readonly leaseTime: number;
  /** Issue a fencing token. */
  readonly fencing: boolean;
  /** Replicas that must acknowledge the grant (0: none); fewer → ReplicaSyncError. */
  readonly syncReplicas?: number;
}

/** The answer to an acquire attempt. */
export type AcquireReply =
  | { readonly granted: true; readonly fencingToken: number | undefined }
  /** `ttl`: ms until the holder's lease ends; Infinity for a lock without a lease. */
  | { readonly granted: false; readonly ttl: number };

/** A hold as the store knows it: enough to renew or release it. */
export interface StoredHold {
  readonly key: string;
  readonly name: string;
  readonly owner: string;
  /** Replicas whose acknowledgement a release waits for, best effort (0: none). */
  readonly syncReplicas?: number;
}

/** Receives the store's release notices. */
export interface NoticeListener {
  /** A lock this process subscribed to was released (or force-unlocked). */
  notice(name: string): void;
  /** The notice connection came back after a break: notices may have been missed. */
  reconnected(): void;
}

/**
 * Where locks live: the seam between the engine (ownership, waiting, watchdog) and the wire.
 * Every method is one atomic step in the store. Failures reject with LockRedisError; its
 * `refused` is false when the request got no answer (retry may help), true when the store
 * refused it.
 */
export interface LockStore {
  /** Takes the lock for `request.owner` if free (or already its own: a resent attempt). */
  acquire(request: AcquireRequest): Promise<AcquireReply>;
  /**
   * Frees `hold` if its owner still holds it, idempotently (a resent release gets the first
   * answer). Resolves how many processes were told of the release, or null when the owner did
   * not hold it (expired or deleted): nothing is touched then.
   */
  release(hold: StoredHold): Promise<number | null>;
  /**
   * Restores the lease of each hold still owned. Gets every hold due in a renewal period at
   * once and batches them as it sees fit. One result per hold: true (still held), false (lost),
   * or the error of a call that got no answer (neither confirmed nor lost).
   */
  renew(holds: readonly StoredHold[], leaseTime: number): Promise<(boolean | Error)[]>;
  /** Deletes the lock whoever holds it and tells its waiters; true when there was one. */
  forceUnlock(key: string, name: string): Promise<boolean>;
  /** The remaining lease of the lock in ms; null when free, Infinity when held without a lease. */
  remainingTtl(key: string, name: string): Promise<number | null>;
  /** Start receiving release notices of lock `name`; resolves once they flow. */
  subscribe(name: string): Promise<void>;
  unsubscribe(name: string): Promise<void>;
  /** Sets the one listener of release notices. */
  listen(listener: NoticeListener): void;
}

/**
 * An acquire refused because fewer replicas than required acknowledged its grant within the
 * sync timeout; the store released the grant again, so the caller may try once more.
 */
export class ReplicaSyncError extends LockRedisError {
  constructor(
    key: string,
    /** Replicas that acknowledged the grant. */
    readonly acknowledged: number,
    /** Replicas required (`syncReplicas`). */
    readonly required: number,
    timeout: number,
  ) {
    super(
      key,
      'acquire',
      new Error(
        `${acknowledged} of the ${required} replicas required (syncReplicas) acknowledged the grant within ${timeout} ms, so it was released`,
      ),
      true,
    );
  }
}

/** Whether a store call failed without an answer (worth retrying) rather than being refused. */
export function isConnectionError(error: unknown): boolean {
  return error instanceof LockRedisError && !error.refused;
}
