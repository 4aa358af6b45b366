/**
 * Redisson's names for the keys and channel that go with a lock, so that a Java service using
 * Redisson and this library exclude each other on the same lock name.
 */

/** Message published on the lock's channel when it is freed (Redisson's UNLOCK_MESSAGE). */
export const UNLOCK_MESSAGE = '0';
/** Message that wakes every waiter (Redisson's READ_UNLOCK_MESSAGE, sent by read-write locks). */
export const WAKE_ALL_MESSAGE = '1';

/**
 * An auxiliary name in the lock's cluster slot: `prefix:{name}`, or `prefix:name` when the
 * name already has a hash tag.
 */
function auxName(prefix: string, name: string): string {
  return name.includes('{') ? `${prefix}:${name}` : `${prefix}:{${name}}`;
}

/** The channel a release of lock `name` is announced on. */
export function channelName(name: string): string {
  return auxName('redisson_lock__channel', name);
}

/** The fencing-token counter of lock `name` (Redisson's RFencedLock). */
export function tokenKey(name: string): string {
  return auxName('redisson_lock_token', name);
}

/** The latch that makes one release request of lock `name` idempotent (Redisson 3.24+). */
export function unlockLatchKey(name: string, requestId: string): string {
  return `${auxName('redisson_unlock_latch', name)}:${requestId}`;
}

/** The channel of a read-write lock (Redisson's RReadWriteLock). */
export function rwChannelName(name: string): string {
  return auxName('redisson_rwlock', name);
}

/** The prefix of a read-write lock's read lease keys: `{name}`, or the name with a hash tag. */
export function readLeasePrefix(name: string): string {
  return name.includes('{') ? name : `{${name}}`;
}

/** The lease key of `owner`'s read hold (Redisson's `<prefix>:<owner>:rwlock_timeout:1`). */
export function readLeaseKey(name: string, owner: string): string {
  return `${readLeasePrefix(name)}:${owner}:rwlock_timeout:1`;
}

/** A fair lock's queue of waiting owners (Redisson's RFairLock). */
export function fairQueueName(name: string): string {
  return auxName('redisson_lock_queue', name);
}

/** A fair lock's waiter deadlines. */
export function fairTimeoutName(name: string): string {
  return auxName('redisson_lock_timeout', name);
}

/**
 * When a fair lock's queue head's turn is expected, ms (ours, not Redisson's; in the deadline
 * set's slot and ACL pattern).
 */
export function fairTurnName(name: string): string {
  return `${fairTimeoutName(name)}:turn`;
}

/** The channel on which a fair lock's waiter `owner` is told its turn has come. */
export function fairWaiterChannel(name: string, owner: string): string {
  return `${channelName(name)}:${owner}`;
}

/** The zset of a semaphore's leased permits (Redisson's RPermitExpirableSemaphore). */
export function permitsName(name: string): string {
  return name.includes('{') ? `${name}:timeout` : `{${name}}:timeout`;
}

/** The channel a semaphore's releases are announced on. */
export function semaphoreChannelName(name: string): string {
  return auxName('redisson_sc', name);
}

/**
 * A release request id of 32 hex digits, as Redisson's: the store's random `prefix` (16 hex
 * digits), the owner's number and its kind's digit (RedisKind.requestDigit: a downgraded owner
 * releases a read and a write hold).
 */
export function releaseRequestId(prefix: string, owner: string, kindDigit: string): string {
  const seq = owner.slice(owner.lastIndexOf(':') + 1);
  return prefix + seq.padStart(15, '0') + kindDigit;
}
