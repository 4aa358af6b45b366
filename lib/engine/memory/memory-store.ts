import { now } from '../clock';
import type { AcquireReply, AcquireRequest, StoredHold } from '../store/lock-store';
import { MemoryStoreClient, type MemoryLockTable } from './memory-store-client';

/** How long the answer of a release is kept for the same release sent again, ms (as Redis' latch). */
const UNLOCK_LATCH_TTL = 10_000;

/** A lock held in memory: one owner (the hold count stays 1, as in Redis) and its lease. */
interface MemoryLock {
  readonly owner: string;
  /** Monotonic time (clock.ts) at which the lease ends. */
  expiresAt: number;
  /** Deletes the lock when its lease ends (unref'd). */
  timer: NodeJS.Timeout | undefined;
}

/** A release's answer, kept for UNLOCK_LATCH_TTL ms. */
interface Latch {
  readonly listeners: number;
  readonly expiresAt: number;
}

/**
 * Locks in this process's memory, for tests and single-process development: the same
 * semantics as a Redis server inside one process (leases that expire, idempotent release,
 * release notices to subscribed services, fencing tokens), without a network. Every LockService
 * given the same instance shares its locks, as applications on one Redis do;
 * `RedisLockModule.forRoot({ store: 'memory' })` uses `MemoryLockStore.shared`.
 */
export class MemoryLockStore implements MemoryLockTable {
  /** The process-wide store behind `store: 'memory'`. */
  static readonly shared = new MemoryLockStore();

  private readonly locks = new Map<string, MemoryLock>();
  /** Latches in the order they were set, which is also the order they expire in. */
  private readonly latches = new Map<string, Latch>();
  private readonly subscribers = new Map<string, Set<MemoryStoreClient>>();
  /** The last fencing token issued: one counter for every lock, so each lock's tokens grow. */
  private lastToken = 0;

  /** A connection to this store for one LockService (its own notices and subscriptions). */
  connect(): MemoryStoreClient {
    return new MemoryStoreClient(this);
  }

  /** Takes the lock for the request's owner if free; a resent acquire of the holder renews it. */
  acquire(request: AcquireRequest): AcquireReply {
    const { name, owner } = request;
    let lock = this.live(name);
    if (lock === undefined) {
      lock = { owner, expiresAt: 0, timer: undefined };
      this.locks.set(name, lock);
    } else if (lock.owner !== owner) {
      return { granted: false, ttl: remaining(lock) };
    }
    this.setLease(name, lock, request.leaseTime);
    return { granted: true, fencingToken: request.fencing ? ++this.lastToken : undefined };
  }

  /**
   * Frees the hold if its owner holds the lock and notifies the subscribers; the number of
   * them, the previous answer for a release sent again, or null when the owner did not hold it.
   */
  release(hold: StoredHold): number | null {
    const { name, owner } = hold;
    const latchKey = `${owner}\n${name}`;
    this.dropExpiredLatches();
    const lock = this.live(name);
    if (lock?.owner !== owner) return this.latches.get(latchKey)?.listeners ?? null;
    this.delete(name, lock);
    const listeners = this.publish(name);
    this.latches.set(latchKey, { listeners, expiresAt: now() + UNLOCK_LATCH_TTL });
    return listeners;
  }

  /** Restores the lease of each hold still owned; one boolean per hold. */
  renew(holds: readonly StoredHold[], leaseTime: number): boolean[] {
    return holds.map((hold) => {
      const lock = this.live(hold.name);
      if (lock?.owner !== hold.owner) return false;
      this.setLease(hold.name, lock, leaseTime);
      return true;
    });
  }

  /** Deletes the lock whoever holds it and notifies the subscribers; true when there was one. */
  forceUnlock(name: string): boolean {
    const lock = this.live(name);
    if (lock === undefined) return false;
    this.delete(name, lock);
    this.publish(name);
    return true;
  }

  /** The remaining lease in ms, or null when the lock is free. */
  remainingTtl(name: string): number | null {
    const lock = this.live(name);
    return lock === undefined ? null : remaining(lock);
  }

  /** Starts sending release notices of lock `name` to `client`. */
  subscribe(client: MemoryStoreClient, name: string): void {
    let clients = this.subscribers.get(name);
    if (clients === undefined) {
      clients = new Set();
      this.subscribers.set(name, clients);
    }
    clients.add(client);
  }

  /** Stops sending release notices of lock `name` to `client`. */
  unsubscribe(client: MemoryStoreClient, name: string): void {
    const clients = this.subscribers.get(name);
    if (clients?.delete(client) && clients.size === 0) this.subscribers.delete(name);
  }

  /** The lock `name` if held and within its lease (a lapsed one is deleted first). */
  private live(name: string): MemoryLock | undefined {
    const lock = this.locks.get(name);
    if (lock !== undefined && lock.expiresAt <= now()) {
      this.delete(name, lock);
      return undefined;
    }
    return lock;
  }

  private setLease(name: string, lock: MemoryLock, leaseTime: number): void {
    lock.expiresAt = now() + leaseTime;
    clearTimeout(lock.timer);
    // An expired lock is deleted without a notice, as Redis expires a key without a message.
    lock.timer = setTimeout(() => this.delete(name, lock), leaseTime);
    lock.timer.unref();
  }

  private delete(name: string, lock: MemoryLock): void {
    clearTimeout(lock.timer);
    if (this.locks.get(name) === lock) this.locks.delete(name);
  }

  /** Schedules a release notice to each subscriber (never synchronously); how many there are. */
  private publish(name: string): number {
    const clients = this.subscribers.get(name);
    if (clients === undefined) return 0;
    for (const client of clients) setImmediate(() => client.deliver(name));
    return clients.size;
  }

  /** Drops the latches whose time is over (the oldest come first). */
  private dropExpiredLatches(): void {
    const time = now();
    for (const [key, latch] of this.latches) {
      if (latch.expiresAt > time) return;
      this.latches.delete(key);
    }
  }
}

/** Ms until the lock's lease ends, at least 1 while it runs. */
function remaining(lock: MemoryLock): number {
  return Math.max(1, Math.ceil(lock.expiresAt - now()));
}
