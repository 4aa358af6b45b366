/*
 * The channels of a MemoryLockStore, one family per lock layout as in Redis: names are quoted
 * (JSON) so that no name or owner can make one family's channel look like another's.
 */

/** Releases of the exclusive lock `name` (plain, group member; Redisson's lock channel). */
export function lockChannel(name: string): string {
  return `lock:${JSON.stringify(name)}`;
}

/** Releases of the read-write lock `name`. */
export function readWriteChannel(name: string): string {
  return `rwlock:${JSON.stringify(name)}`;
}

/** Releases of permits of the semaphore `name`. */
export function permitChannel(name: string): string {
  return `semaphore:${JSON.stringify(name)}`;
}

/** The turn of fair waiter `owner` in the queue of lock `name`. */
export function fairWaiterChannel(name: string, owner: string): string {
  return `fair:${JSON.stringify(name)}:${JSON.stringify(owner)}`;
}
