/** Base class of every error this library throws: `catch (e) { if (e instanceof LockError) … }`. */
export class LockError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** Which process holds a lock: what its client registered (see docs/inspector.md). */
export interface LockHolder {
  /** The holder's `appName` (module option; default its package.json name). */
  readonly app: string;
  /** The holder's host name (`os.hostname()`). */
  readonly host: string;
  /** The holder's process id. */
  readonly pid: number;
}

/** The lock could not be taken within the wait time. */
export class LockAcquireTimeoutError extends LockError {
  constructor(
    /** The lock key, as given (without `keyPrefix`). */
    readonly key: string,
    /** How long the caller waited, in milliseconds. */
    readonly waitTime: number,
    /** Whether this very process held the lock at the time, in another call chain. */
    readonly heldByThisProcess = false,
    /**
     * When to retry, ms (e.g. an HTTP `Retry-After`): the lock's typical hold time in this
     * process, bounded by the holder's remaining lease as last seen (the lease alone before any
     * hold of this process was timed); undefined when the holder has no lease.
     */
    readonly retryAfter?: number,
    /**
     * The process that held the lock when the wait ended, when its client is registered in Redis
     * (looked up once, after the wait, best effort); undefined for an unregistered holder (a Java
     * Redisson service), a semaphore, the memory store, or a lookup that took too long.
     */
    readonly holder?: LockHolder,
  ) {
    super(
      `Could not acquire lock "${key}" within ${waitTime} ms: ` +
        (heldByThisProcess
          ? 'another call chain of this process (e.g. another request) still holds it. '
          : `another owner${holder ? ` (${holderText(holder)})` : ''} still holds it. `) +
        'Raise waitTime, or use tryAcquire() to handle a busy lock without an error.',
    );
  }
}

/** A holder in words: `app orders on host web-1, pid 4242`. */
export function holderText(holder: LockHolder): string {
  return `app ${holder.app} on host ${holder.host}, pid ${holder.pid}`;
}

/** A release or re-entry was attempted by a caller that does not hold the lock. */
export class LockNotHeldError extends LockError {
  constructor(
    /** The lock key. */
    readonly key: string,
    detail: string,
  ) {
    super(`Lock "${key}" is not held by this caller: ${detail}`);
  }
}

/**
 * The lock stopped being held while its owner still relied on it: it expired, was deleted
 * (forceUnlock or another client), or Redis lost it (restart, failover). Its handle's `signal`
 * is aborted with this error as the reason.
 */
export class LockLostError extends LockError {
  constructor(
    /** The lock key. */
    readonly key: string,
    /** What happened, in words. */
    readonly reason: string,
  ) {
    super(
      `Lock "${key}" was lost while held: ${reason}. Work done after that point was not ` +
        'protected; use the fencing token to make the protected store reject stale writers.',
    );
  }
}

/**
 * A call chain that holds only the read lock of a read-write lock asked for its write lock.
 * Waiting would never end (the write waits for every read hold, this chain's too), so it is
 * refused at once and nothing held changes. Release the read hold first, or take the write
 * lock from the start (a writer may take the read lock: a downgrade).
 */
export class LockUpgradeError extends LockError {
  constructor(
    /** The lock key. */
    readonly key: string,
  ) {
    super(
      `Lock "${key}": this call chain holds its read lock and asked for its write lock; upgrading would deadlock. Take the write lock first (a writer may also read), or release the read lock before writing.`,
    );
  }
}

/**
 * A call chain asked for a lock it already holds through a handle from `acquire()` (or
 * `tryAcquire()`), outside `runAs`: it would wait for itself until its wait ends. Thrown at once.
 * Run the call inside `locks.runAs(handle, () => …)`, or take the lock with `run()`.
 */
export class LockSelfDeadlockError extends LockError {
  constructor(
    /** The lock key asked for. */
    readonly key: string,
    /** The key of the chain's own handle that holds it (a multi-lock's keys). */
    readonly heldKey: string,
  ) {
    super(
      `Lock "${key}": this call chain already holds "${heldKey}" through a handle from acquire(), ` +
        'so it would wait for itself. Run the call inside locks.runAs(handle, () => …) to ' +
        're-enter with that handle, or take the lock with locks.run(key, () => …) instead of acquire().',
    );
  }
}

/** A lock key, key template or key argument is unusable. */
export class LockKeyError extends LockError {}

/** A module option or lock option is invalid. */
export class LockOptionsError extends LockError {
  constructor(
    /** The name of the offending option, e.g. `leaseTime`. */
    readonly option: string,
    message: string,
  ) {
    super(`Invalid option "${option}": ${message}`);
  }
}

/**
 * Redis refused or failed a lock operation (connection lost, READONLY replica, OOM, ACL denied,
 * …). The original error is the `cause`; no lock was taken by the failed call.
 */
export class LockRedisError extends LockError {
  constructor(
    /** The lock key. */
    readonly key: string,
    operation: string,
    cause: unknown,
    /** True when Redis answered with an error; false when the request got no answer in time. */
    readonly refused = false,
  ) {
    super(
      `Redis failed to ${operation} lock "${key}": ${cause instanceof Error ? cause.message : String(cause)}. ` +
        (refused
          ? 'Check that the Redis user may run EVALSHA/SCRIPT on a writable primary.'
          : 'Check that Redis is reachable at the configured address.'),
      { cause },
    );
  }
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

/** An error's message, or the value in words: for log lines. */
export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
