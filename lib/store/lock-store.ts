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
    }
  | {
      readonly granted: false;
      /** ms until the holder's lease ends (or the wait a fair queue asks for); Infinity: none. */
      readonly ttl: number;
      /** `multi`: the index in `names` of the member that was busy. */
      readonly busy?: number;
    };

/** A grant without a fencing token: the answer of most granted acquires. */
export const GRANTED: AcquireReply = { granted: true, fencingToken: undefined };

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
 * Where locks live: the seam between the engine (ownership, waiting, watchdog) and the wire:
 * the operations every store has. What only some primitives need (a fair queue's leave, a
 * semaphore's count, the fast path) are capability ports (ports.ts). Every method is one
 * atomic step in the store. A failed call rejects with the package's store error (errors.ts):
 * `isConnectionError` tells a request that got no answer (retry may help) from one the store
 * refused.
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
   * Restores the lease of each hold still owned. Gets every hold due in a renewal period at
   * once and batches them as it sees fit. One result per hold: true (still held), false (lost;
   * for a group: any member), or the error of a call that got no answer.
   */
  renew(holds: readonly StoredHold[], leaseTime: number): Promise<(boolean | Error)[]>;
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
   * StoreUnreachableError (errors.ts), unsent. Optional: a store without it is always reachable.
   */
  unreachable?(): Error | undefined;
  /**
   * Resolves once the store can take requests again, after what its client resends on
   * reconnecting (an acquire whose answer was lost: its cleanup must go out behind it).
   * Optional, with `unreachable`.
   */
  reachable?(): Promise<void>;
}
