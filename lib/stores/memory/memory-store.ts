import {
  wrongKindError,
  type AcquireReply,
  type AcquireRequest,
  type HoldKind,
  type LockTarget,
  type StoredHold,
} from '../../store';
import { lockChannel, readWriteChannel } from './channels';
import { PlainLocks } from './exclusive-locks';
import { FairLocks } from './fair-locks';
import type { HoldKindStore } from './hold-kind';
import { Latches } from './latches';
import { LockTable } from './lock-table';
import { MemoryStoreClient, type MemoryLockTable } from './memory-store-client';
import { membersOf, MultiLocks } from './multi-locks';
import { Semaphores } from './permits';
import { ReadWriteLocks } from './read-write-locks';

/**
 * Locks in this process's memory, for tests and single-process development: the same
 * semantics as a Redis server running this library's scripts, inside one process (every hold
 * kind, leases that expire, idempotent release, notices to subscribed services, fencing
 * tokens), without a network. Every LockService given the same instance shares its locks, as
 * applications on one Redis do; `RedisLockModule.forRoot({ store: 'memory' })` uses
 * `MemoryLockStore.shared`.
 */
export class MemoryLockStore implements MemoryLockTable {
  /** The process-wide store behind `store: 'memory'`. */
  static readonly shared = new MemoryLockStore();

  /** Lock names: plain, fair, group-member and read-write locks of a name exclude each other. */
  private readonly table = new LockTable();
  private readonly fair: FairLocks;
  private readonly semaphores: Semaphores;
  private readonly kinds: Record<HoldKind, HoldKindStore>;
  /** The answers of recent releases, for a release sent again. */
  private readonly latches = new Latches();
  private readonly subscribers = new Map<string, Set<MemoryStoreClient>>();

  constructor() {
    const publish = (channel: string) => this.publish(channel);
    this.fair = new FairLocks(this.table, publish);
    this.semaphores = new Semaphores(publish);
    this.kinds = {
      lock: new PlainLocks(this.table, publish),
      fair: this.fair,
      read: new ReadWriteLocks('read', this.table, publish),
      write: new ReadWriteLocks('write', this.table, publish),
      multi: new MultiLocks(this.table, publish),
      permit: this.semaphores,
    };
  }

  /** A connection to this store for one LockService (its own notices and subscriptions). */
  connect(): MemoryStoreClient {
    return new MemoryStoreClient(this);
  }

  /** Takes the target for the request's owner if free; a resent acquire of the holder renews it. */
  acquire(request: AcquireRequest): AcquireReply {
    this.assertKind(request);
    return this.kinds[request.kind].acquire(request);
  }

  /**
   * Frees the hold if its owner holds it and notifies the subscribers: how many there are, the
   * first answer for a release sent again, or null when the owner did not hold it (a group:
   * some member).
   */
  release(hold: StoredHold): number | null {
    const latchKey = [hold.kind, hold.owner, ...membersOf(hold)].join('\n');
    const answer = this.kinds[hold.kind].release(hold);
    if (answer === undefined) return this.latches.get(latchKey) ?? null;
    this.latches.set(latchKey, answer);
    return answer;
  }

  /** Restores the lease of each hold still owned; one boolean per hold. */
  renew(holds: readonly StoredHold[], leaseTime: number): boolean[] {
    return holds.map((hold) => this.kinds[hold.kind].renew(hold, leaseTime));
  }

  /** Takes a fair waiter that gives up out of its queue (the next one is told if due). */
  leave(request: AcquireRequest): void {
    this.fair.leave(request.name, request.owner);
  }

  /**
   * Frees the target whoever holds it and notifies its waiters; true when it was held. A
   * `permit` target revokes every permit; any other frees whatever lives under the name (each
   * member's for a group): an exclusive lock with its fair queue, or a read-write lock.
   */
  forceUnlock(target: LockTarget): boolean {
    this.assertKind(target);
    if (target.kind === 'permit') return this.semaphores.revoke(target.name);
    let freed = false;
    for (const name of membersOf(target)) {
      const entry = this.table.get(name);
      this.fair.clear(name);
      if (entry === undefined) continue;
      this.table.delete(name, entry);
      this.publish(entry.type === 'rw' ? readWriteChannel(name) : lockChannel(name));
      freed = true;
    }
    return freed;
  }

  /** The remaining lease in ms, or null when the target is free (see LockStore.remainingTtl). */
  remainingTtl(target: LockTarget): number | null {
    this.assertKind(target);
    return this.kinds[target.kind].remainingTtl(target);
  }

  /** How many more permits a caller with the target's limit could take now. */
  available(target: LockTarget): number {
    this.assertKind(target);
    return this.semaphores.available(target);
  }

  /**
   * Refuses a call on a name that holds the other family (a lock on a semaphore's name, a
   * semaphore on a held lock's), as Redis answers WRONGTYPE: throws wrongKindError.
   */
  private assertKind(target: LockTarget): void {
    const clash =
      target.kind === 'permit'
        ? this.table.get(target.name) !== undefined
        : membersOf(target).some((name) => this.semaphores.has(name));
    if (clash) throw wrongKindError(target.key);
  }

  /** Starts sending the messages of `channel` to `client`. */
  subscribe(client: MemoryStoreClient, channel: string): void {
    let clients = this.subscribers.get(channel);
    if (clients === undefined) {
      clients = new Set();
      this.subscribers.set(channel, clients);
    }
    clients.add(client);
  }

  /** Stops sending the messages of `channel` to `client`. */
  unsubscribe(client: MemoryStoreClient, channel: string): void {
    const clients = this.subscribers.get(channel);
    if (clients?.delete(client) && clients.size === 0) this.subscribers.delete(channel);
  }

  /** Schedules a message to each subscriber of `channel` (never synchronously); how many. */
  private publish(channel: string): number {
    const clients = this.subscribers.get(channel);
    if (clients === undefined) return 0;
    for (const client of clients) setImmediate(() => client.deliver(channel));
    return clients.size;
  }
}
