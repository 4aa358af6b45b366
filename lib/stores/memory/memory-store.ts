import {
  unsupportedError,
  wrongKindError,
  type AcquireReply,
  type AcquireRequest,
  type HoldKind,
  type LockTarget,
  type StoredHold,
} from '../../store';
import { memoryKinds, membersOf, type MemoryKind } from './kinds';
import { LockTable } from './lock-table';
import { MemoryStoreClient, type MemoryLockTable } from './memory-store-client';
import { UnlockLatches } from './unlock-latches';

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
  /** The memory side of each kind of hold (kinds/), by id. */
  private readonly kinds: { readonly [K in HoldKind]: MemoryKind };
  /** The answers of recent releases, for a release sent again. */
  private readonly latches = new UnlockLatches();
  private readonly subscribers = new Map<string, Set<MemoryStoreClient>>();

  constructor() {
    this.kinds = memoryKinds(this.table, (channel) => this.publish(channel));
  }

  /** A connection to this store for one LockService (its own notices and subscriptions). */
  connect(): MemoryStoreClient {
    return new MemoryStoreClient(this);
  }

  /** Takes the target for the request's owner if free; a resent acquire of the holder renews it. */
  acquire(request: AcquireRequest): AcquireReply {
    return this.checked(request).acquire(request);
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

  /**
   * KeptReleasePort: keeps the owner's plain lock `keepFor` ms from now, with no notice; true,
   * also for the same release sent again (its latch answers, the lease is not moved), or false
   * when the owner did not hold it.
   */
  releaseKept(hold: StoredHold, keepFor: number): boolean {
    const latchKey = ['kept', hold.owner, hold.name].join('\n');
    if (this.latches.get(latchKey) !== undefined) return true;
    const kind = this.checked(hold);
    if (kind.releaseKept === undefined) throw unsupportedError(hold, 'releaseKept');
    if (!kind.releaseKept(hold, keepFor)) return false;
    this.latches.set(latchKey, 1);
    return true;
  }

  /** Restores the lease of each hold still owned; one boolean per hold. */
  renew(holds: readonly StoredHold[], leaseTime: number): boolean[] {
    return holds.map((hold) => this.kinds[hold.kind].renew(hold, leaseTime));
  }

  /** FairQueuePort: takes a fair waiter that gives up out of its queue. */
  leave(request: AcquireRequest): void {
    const kind = this.kinds[request.kind];
    if (kind.leave === undefined) throw unsupportedError(request, 'leave');
    kind.leave(request);
  }

  /**
   * Frees the target whoever holds it and notifies its waiters; true when it was held. A
   * `permit` target revokes every permit; any other frees whatever lives under the name (each
   * member's for a group): an exclusive lock with its fair queue, or a read-write lock.
   */
  forceUnlock(target: LockTarget): boolean {
    return this.checked(target).forceUnlock(target);
  }

  /** The remaining lease in ms, or null when the target is free (see LockStore.remainingTtl). */
  remainingTtl(target: LockTarget): number | null {
    return this.checked(target).remainingTtl(target);
  }

  /** PermitCountPort: how many more permits a caller with the target's limit could take now. */
  available(target: LockTarget): number {
    const kind = this.checked(target);
    if (kind.available === undefined) throw unsupportedError(target, 'available');
    return kind.available(target);
  }

  /** See LockStore.channel. */
  channel(target: LockTarget, owner: string): string {
    return this.kinds[target.kind].channel(target, owner);
  }

  /**
   * The target's kind, unless its name holds another type of object (a lock on a semaphore's
   * name, a semaphore on a held lock's): then wrongKindError, as Redis answers WRONGTYPE.
   */
  private checked(target: LockTarget): MemoryKind {
    const kind = this.kinds[target.kind];
    if (kind.clashes(target)) throw wrongKindError(target.key);
    return kind;
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
  publish(channel: string): number {
    const clients = this.subscribers.get(channel);
    if (clients === undefined) return 0;
    for (const client of clients) setImmediate(() => client.deliver(channel));
    return clients.size;
  }
}
