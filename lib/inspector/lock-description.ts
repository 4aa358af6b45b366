import type { ClientInfo } from '../store';

/**
 * What the inspector found under a lock name: `free` (nothing), `plain` (a lock hash: RLock;
 * also a fair lock nobody queues for, which looks the same), `fair` (a lock hash with a fair
 * queue, or a queue alone), `read-write` (a hash with a `mode` field), `semaphore` (a permit
 * count), `other` (a key of another type: not a lock of this library or Redisson's).
 */
export type LockKindFound = 'free' | 'plain' | 'fair' | 'read-write' | 'semaphore' | 'other';

/** The client behind an owner id: its registered record, or none (an unknown client). */
export interface OwnerView {
  /** The owner id as stored (`<client uuid>:<n>`; Redisson's `<uuid>:<thread id>`). */
  readonly owner: string;
  /** The client id: the owner id's part before its first `:`. */
  readonly clientId: string;
  /**
   * The client's registration (app, host, pid, …); undefined for an unregistered client: a Java
   * Redisson service, an older version of this library, a process dead for more than a lease.
   */
  readonly client: ClientInfo | undefined;
}

/** One holder of a lock, read-write lock or semaphore. */
export interface HolderView extends OwnerView {
  /** Its hold count as stored (1 for this library, which counts re-entry in the process). */
  readonly holdCount: number;
  /** A read-write lock's holder: its mode. */
  readonly mode?: 'read' | 'write';
  /** A hold released with `holdAtLeast` and kept until its lease ends (`<owner>:kept`). */
  readonly kept?: boolean;
  /** A semaphore's permit: ms until its lease ends. */
  readonly ttl?: number;
}

/** A waiter in a fair lock's queue, in queue order. */
export interface QueuedView extends OwnerView {
  /** When it loses its place unless it comes back, ms since the epoch (Redis' clock). */
  readonly deadline: number | undefined;
}

/** A semaphore's permits. */
export interface PermitCount {
  /** Permits held and not expired. */
  readonly used: number;
  /** Permits free now (the stored count plus expired permits not yet collected). */
  readonly free: number;
}

/** One held lock as list() finds it. */
export interface LockSummary {
  /** The key, without `keyPrefix`. */
  readonly key: string;
  /** The name in Redis: `keyPrefix + key`. */
  readonly name: string;
  readonly kind: LockKindFound;
  /** The Redis type of the name (`hash`, `string`, `none`, …). */
  readonly redisType: string;
  /** Who holds it now, in field order. */
  readonly holders: readonly HolderView[];
  /** The lock's remaining lease, ms: null when free, Infinity when held without a lease. */
  readonly ttl: number | null;
  /** The last fencing token issued on this name (`redisson_lock_token:{N}`), if any. */
  readonly fencingToken: number | undefined;
  /** A fair lock's queue, head first. */
  readonly queue: readonly QueuedView[];
  /** A semaphore's permits. */
  readonly permits: PermitCount | undefined;
}

/** What describe() finds: a summary, and how many processes wait. */
export interface LockDescription extends LockSummary {
  /**
   * Processes waiting for it: the subscribers of its release channel (each process subscribes
   * once however many of its callers wait; Redisson's clients too).
   */
  readonly waiting: number;
}

/** A client seen by clients(): registered, or only seen as a holder. */
export interface ClientSummary {
  readonly clientId: string;
  /** Its registration; undefined for an unknown client that holds locks. */
  readonly client: ClientInfo | undefined;
  /** How many of the locks list() found it holds (under the inspector's keyPrefix). */
  readonly locks: number;
}
