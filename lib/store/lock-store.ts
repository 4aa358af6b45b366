import { LockRedisError } from '../errors';

/**
 * The kinds of hold a store keeps, each in Redisson's layout: `lock` (RLock), `fair` (RFairLock:
 * the same hash, granted in queue order), `read` and `write` (RReadWriteLock), `multi` (several
 * RLocks taken together by one owner), `permit` (a leased permit of RPermitExpirableSemaphore).
 */
export type HoldKind = 'lock' | 'fair' | 'read' | 'write' | 'multi' | 'permit';

/** What a store call is about: one lock, read-write lock, semaphore or group of locks. */
export interface LockTarget {
  readonly kind: HoldKind;
  /** The key as the user gave it (for error messages); a group's keys joined with ', '. */
  readonly key: string;
  /** The store's name (keyPrefix + key); a group's first member. */
  readonly name: string;
  /** `multi`: every member's store name, deduplicated, in the order they are taken. */
  readonly names?: readonly string[];
  /** `permit`: how many permits the caller allows at once. */
  readonly permits?: number;
}

/** One acquire attempt of a target by `owner`. */
export interface AcquireRequest extends LockTarget {
  /**
   * The owner id, `<client uuid>:<sequence number>`: unique to this attempt, except that a fair
   * waiter keeps one for all its attempts and a downgrade reuses its write hold's.
   */
  readonly owner: string;
  /** Lease in ms. */
  readonly leaseTime: number;
  /** Issue a fencing token (`lock` only). */
  readonly fencing: boolean;
  /** Replicas that must acknowledge the grant (0: none); fewer → ReplicaSyncError. */
  readonly syncReplicas?: number;
  /** `fair`: join the queue when refused (false: a single try that leaves no trace). */
  readonly queue?: boolean;
  /** `fair`: how long past its expected turn a queued waiter keeps its place, ms. */
  readonly placeTimeout?: number;
}

/** The answer to an acquire attempt. */
export type AcquireReply =
  | {
      readonly granted: true;
      readonly fencingToken: number | undefined;
      /** Others may hold it at once too (a read hold, a permit): the next waiter tries now. */
      readonly shared?: boolean;
    }
  | {
      readonly granted: false;
      /** ms until the holder's lease ends (or the wait a fair queue asks for); Infinity: none. */
      readonly ttl: number;
      /** `multi`: the index in `names` of the member that was busy. */
      readonly busy?: number;
    };

/** A hold as the store knows it: enough to renew or release it. */
export interface StoredHold extends LockTarget {
  readonly owner: string;
  /** Replicas whose acknowledgement a release waits for, best effort (0: none). */
  readonly syncReplicas?: number;
}

/**
 * How long a store keeps the answer of a release (its unlock latch) for the same release sent
 * again, ms: Redis keeps it in a latch key, the memory store in a table.
 */
export const UNLOCK_LATCH_TTL = 10_000;

/** Receives the store's release notices. */
export interface NoticeListener {
  /** A message came on `channel` (see LockStore.channel): a release, or the turn of a waiter. */
  notice(channel: string): void;
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
  /** Takes the target for `request.owner` if free (or already its own: a resent attempt). */
  acquire(request: AcquireRequest): Promise<AcquireReply>;
  /**
   * Frees `hold` if its owner still holds it, idempotently (a resent release gets the first
   * answer). Resolves how many processes were told of the release, or null when the owner did
   * not hold it (expired or deleted; for a group: any member). Nothing of another owner is
   * ever touched.
   */
  release(hold: StoredHold): Promise<number | null>;
  /**
   * acquire(), its answer handed to `answered` (a failure to `failed`) in the step that reads it,
   * never before acquireInto() returns: one promise and one microtask hop less on the path every
   * lock call takes. Optional: without it the engine uses acquire().
   */
  acquireInto?(
    request: AcquireRequest,
    answered: (reply: AcquireReply) => void,
    failed: (error: unknown) => void,
  ): void;
  /** release() as acquireInto() is acquire(). Optional likewise. */
  releaseInto?(
    hold: StoredHold,
    answered: (listeners: number | null) => void,
    failed: (error: unknown) => void,
  ): void;
  /**
   * Restores the lease of each hold still owned. Gets every hold due in a renewal period at
   * once and batches them as it sees fit. One result per hold: true (still held), false (lost;
   * for a group: any member), or the error of a call that got no answer.
   */
  renew(holds: readonly StoredHold[], leaseTime: number): Promise<(boolean | Error)[]>;
  /** `fair`: takes a waiter that gives up out of the queue (the next one is told if due). */
  leave(request: AcquireRequest): Promise<void>;
  /**
   * Frees the target whoever holds it and tells its waiters; true when it was held. A `lock`
   * target frees whatever lives under the name: a plain, fair (its queue too) or read-write
   * lock; a `permit` target revokes every permit.
   */
  forceUnlock(target: LockTarget): Promise<boolean>;
  /**
   * The remaining lease in ms; null when free (`read`/`write`: unless held in that mode),
   * Infinity when held without a lease.
   */
  remainingTtl(target: LockTarget): Promise<number | null>;
  /** `permit`: how many more permits a caller with the target's limit could take now. */
  available(target: LockTarget): Promise<number>;
  /**
   * The channel on which the store announces what a waiter for `target` waits for: releases
   * of the lock (one channel per name and kind), or, for a `fair` waiter, its own turn.
   */
  channel(target: LockTarget, owner: string): string;
  /** Start receiving the messages of `channel`; resolves once they flow. */
  subscribe(channel: string): Promise<void>;
  unsubscribe(channel: string): Promise<void>;
  /** Sets the one listener of messages. */
  listen(listener: NoticeListener): void;
  /**
   * Why the store cannot take a request now (its connection is down: the connection's last
   * error), or undefined when it can. Meanwhile every call fails at once with
   * StoreUnreachableError, unsent. Optional: a store without it is always reachable.
   */
  unreachable?(): Error | undefined;
}

/**
 * A call not sent because the store could not be reached (see LockStore.unreachable): nothing
 * changed in the store. Its `cause` is the connection's error, e.g. `connect ECONNREFUSED`.
 */
export class StoreUnreachableError extends LockRedisError {
  constructor(key: string, operation: string, cause: Error) {
    super(key, operation, cause, false);
  }
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
