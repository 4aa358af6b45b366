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
