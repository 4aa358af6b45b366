import { now } from '../clock';
import type { AcquireReply, AcquireRequest, LockTarget, StoredHold } from '../store/lock-store';
import { fairWaiterChannel } from './channels';
import {
  freeExclusive,
  holdsExclusive,
  lockTtl,
  renewExclusive,
  takeExclusive,
} from './exclusive-locks';
import { GRANTED, type HoldKindStore, type Publish } from './hold-kind';
import { remaining, type LockTable } from './lock-table';

/** A fair lock's waiters, head first, each with its deadline (clock ms): the list and zset. */
type FairQueue = Map<string, number>;

/**
 * Fair locks (fair-acquire.lua, fair-release.lua, fair-leave.lua): the exclusive lock of the
 * name, granted in queue order. A refused waiter keeps its place until its deadline, the end
 * of its expected wait plus the request's place timeout; waiters past it are dropped by every
 * step before the head is chosen. A release tells only the queue head, on its own channel.
 */
export class FairLocks implements HoldKindStore {
  private readonly queues = new Map<string, FairQueue>();

  constructor(
    private readonly table: LockTable,
    private readonly publish: Publish,
  ) {}

  acquire(request: AcquireRequest): AcquireReply {
    const { name, owner } = request;
    const time = now();
    const queue = this.queues.get(name) ?? new Map<string, number>();
    const before = first(queue);
    const head = dropDead(queue, time);
    const entry = this.table.get(name);
    if (entry === undefined) {
      if (head === undefined || head === owner) {
        queue.delete(owner);
        this.store(name, queue);
        takeExclusive(this.table, name, owner, request.leaseTime);
        return GRANTED;
      }
      if (head !== before) this.publish(fairWaiterChannel(name, head));
    } else if (holdsExclusive(entry, owner)) {
      this.store(name, queue);
      this.table.lease(name, entry, request.leaseTime);
      return GRANTED;
    }
    let ahead: string | undefined;
    let queued = false;
    for (const waiter of queue.keys()) {
      if (waiter === owner) {
        queued = true;
        break;
      }
      ahead = waiter;
    }
    // The holder's lease when the caller is (or would be) the head, else the time left to the
    // deadline of the waiter ahead of it.
    let wait = entry === undefined ? Infinity : entry.expiresAt - time;
    if (ahead !== undefined) wait = queue.get(ahead)! - time;
    if (queued || request.queue !== false) {
      const deadline = time + (wait === Infinity ? 0 : wait) + (request.placeTimeout ?? 0);
      const current = queue.get(owner);
      if (current === undefined || current < deadline) queue.set(owner, deadline);
    }
    this.store(name, queue);
    return { granted: false, ttl: remaining(time + wait) };
  }

  release(hold: StoredHold): number | undefined {
    const { name } = hold;
    if (!freeExclusive(this.table, name, hold.owner)) return undefined;
    const queue = this.queues.get(name);
    if (queue === undefined) return 0;
    const head = dropDead(queue, now());
    this.store(name, queue);
    return head === undefined ? 0 : this.publish(fairWaiterChannel(name, head));
  }

  renew(hold: StoredHold, leaseTime: number): boolean {
    return renewExclusive(this.table, hold.name, hold.owner, leaseTime);
  }

  remainingTtl(target: LockTarget): number | null {
    return lockTtl(this.table, target.name);
  }

  /**
   * Takes waiter `owner` out of the queue of lock `name`; when that (or a dead waiter dropped)
   * leaves a new head and the lock is free, the head is told.
   */
  leave(name: string, owner: string): void {
    const queue = this.queues.get(name);
    if (queue === undefined) return;
    const before = first(queue);
    queue.delete(owner);
    const head = dropDead(queue, now());
    this.store(name, queue);
    if (head !== undefined && head !== before && this.table.get(name) === undefined) {
      this.publish(fairWaiterChannel(name, head));
    }
  }

  /** Clears the queue of lock `name` (a force unlock) and tells each waiter it lost its place. */
  clear(name: string): void {
    const queue = this.queues.get(name);
    if (queue === undefined) return;
    this.queues.delete(name);
    for (const waiter of queue.keys()) this.publish(fairWaiterChannel(name, waiter));
  }

  /** Keeps a non-empty queue, drops an empty one. */
  private store(name: string, queue: FairQueue): void {
    if (queue.size > 0) this.queues.set(name, queue);
    else this.queues.delete(name);
  }
}

/** The queue's head. */
function first(queue: FairQueue): string | undefined {
  for (const waiter of queue.keys()) return waiter;
  return undefined;
}

/** Drops the waiters whose deadline has passed at `time`; answers the new head. */
function dropDead(queue: FairQueue, time: number): string | undefined {
  for (const [waiter, deadline] of queue) if (deadline <= time) queue.delete(waiter);
  return first(queue);
}
