import { now } from '../../../time/clock';
import {
  GRANTED,
  type AcquireReply,
  type AcquireRequest,
  type LockTarget,
  type StoredHold,
} from '../../../store';
import { fairWaiterChannel, lockChannel } from '../channels';
import { remaining } from '../lock-table';
import { LockKind } from './memory-kind';
import {
  freeExclusive,
  holdsExclusive,
  lockTtl,
  renewExclusive,
  takeExclusive,
} from './plain-kind';

/** A fair lock's waiters, head first, each with its deadline (clock ms): the list and zset. */
type FairQueue = Map<string, number>;

/** Place timeout before any request named one (the default fairQueueTimeout), ms. */
const DEFAULT_PLACE_TIMEOUT = 5_000;

/**
 * Fair locks (fair-acquire.lua, fair-release.lua, fair-leave.lua): the exclusive lock of the
 * name, granted in queue order, with the scripts' deadlines: each waiter's is the one ahead of it
 * plus the place timeout, the head's the queue's turn plus it. An attempt on a held lock moves
 * the turn to a later lease end and every deadline with it; a grant moves the turn to the new
 * lease end and the deadlines behind to match, a release moves them back to the release's time;
 * an attempt raises the caller's deadline to the one ahead plus the place timeout; a waiter that
 * leaves takes its wait off those behind it; a head told its turn gets at most the place timeout
 * from then. Heads past their deadline (never the caller) are dropped before the head is chosen.
 * A release tells only the queue head, on its own channel, or with nobody queued the plain
 * lock's channel.
 */
export class FairKind extends LockKind {
  private readonly queues = new Map<string, FairQueue>();
  /** Each queue's turn: when its head's turn is expected (clock ms). */
  private readonly turns = new Map<string, number>();
  /** The place timeout of the last request that named one, ms (as RedisStore keeps it). */
  private placeTimeout = DEFAULT_PLACE_TIMEOUT;

  acquire(request: AcquireRequest): AcquireReply {
    const { name, owner, leaseTime } = request;
    const place = (this.placeTimeout = request.placeTimeout ?? this.placeTimeout);
    const time = now();
    const queue = this.queues.get(name) ?? new Map<string, number>();
    const before = first(queue);
    const head = dropDead(queue, time, owner);
    const row = this.host.table.get(name);
    if (row === undefined) {
      if (head === undefined || head === owner) {
        const mine = queue.get(owner);
        queue.delete(owner);
        if (mine !== undefined) shift(queue, time + leaseTime - mine);
        this.turns.set(name, time + leaseTime);
        this.store(name, queue);
        takeExclusive(this.host.table, name, owner, leaseTime);
        return GRANTED;
      }
      if (head !== before) this.tell(name, queue, head, time);
    } else if (holdsExclusive(row, owner)) {
      this.store(name, queue);
      this.host.table.lease(name, row, leaseTime);
      return GRANTED;
    } else if (row.expiresAt !== Infinity) {
      const turn = this.turns.get(name);
      if (head === undefined || turn === undefined || row.expiresAt > turn) {
        if (head !== undefined && turn !== undefined) shift(queue, row.expiresAt - turn);
        this.turns.set(name, row.expiresAt);
      }
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
    const leaseEnd = row === undefined ? Infinity : row.expiresAt;
    let wait = leaseEnd - time;
    let floor = (leaseEnd === Infinity ? time : leaseEnd) + place;
    if (ahead !== undefined) {
      wait = Math.max(0, queue.get(ahead)! - time);
      floor = queue.get(ahead)! + place;
    }
    if (queued || request.queue !== false) {
      queue.set(owner, Math.max(queue.get(owner) ?? -Infinity, floor));
    }
    this.store(name, queue);
    return { granted: false, ttl: remaining(time + wait) };
  }

  release(hold: StoredHold): number | undefined {
    const { name } = hold;
    if (!freeExclusive(this.host.table, name, hold.owner)) return undefined;
    const queue = this.queues.get(name) ?? new Map<string, number>();
    const time = now();
    const turn = this.turns.get(name);
    if (turn !== undefined && turn > time) shift(queue, time - turn);
    this.turns.set(name, time);
    const head = dropDead(queue, time);
    this.store(name, queue);
    return head === undefined
      ? this.host.publish(lockChannel(name))
      : this.tell(name, queue, head, time);
  }

  renew(hold: StoredHold, leaseTime: number): boolean {
    return renewExclusive(this.host.table, hold.name, hold.owner, leaseTime);
  }

  remainingTtl(target: LockTarget): number | null {
    return lockTtl(this.host.table, target.name);
  }

  /** A waiter's own channel: a release tells the queue's head there. */
  channel(target: LockTarget, owner: string): string {
    return fairWaiterChannel(target.name, owner);
  }

  /**
   * FairQueuePort: takes the waiter out of the queue of its lock (those behind it lose the
   * place timeout); when the lock is free and that (or a dead waiter dropped) leaves a new head,
   * the head is told; an emptied queue tells the plain lock's channel.
   */
  leave(request: AcquireRequest): void {
    const { name, owner } = request;
    const queue = this.queues.get(name);
    if (queue === undefined) return;
    const before = first(queue);
    const mine = queue.get(owner);
    let ahead = this.turns.get(name);
    let wait: number | undefined;
    for (const [waiter, deadline] of queue) {
      if (wait !== undefined) queue.set(waiter, deadline - wait);
      else if (waiter === owner) wait = ahead === undefined ? this.placeTimeout : mine! - ahead;
      else ahead = deadline;
    }
    queue.delete(owner);
    const time = now();
    const head = dropDead(queue, time);
    this.store(name, queue);
    if (this.host.table.get(name) !== undefined) return;
    if (head === undefined) this.host.publish(lockChannel(name));
    else if (head !== before) this.tell(name, queue, head, time);
  }

  /** Clears the queue of lock `name` (a force unlock) and tells each waiter it lost its place. */
  clear(name: string): void {
    const queue = this.queues.get(name);
    if (queue === undefined) return;
    this.store(name, new Map());
    for (const waiter of queue.keys()) this.host.publish(fairWaiterChannel(name, waiter));
  }

  /** Tells the head its turn has come: it has at most the place timeout left to take it. */
  private tell(name: string, queue: FairQueue, head: string, time: number): number {
    queue.set(head, Math.min(queue.get(head)!, time + this.placeTimeout));
    return this.host.publish(fairWaiterChannel(name, head));
  }

  /** Keeps a non-empty queue, drops an empty one (and its turn). */
  private store(name: string, queue: FairQueue): void {
    if (queue.size > 0) {
      this.queues.set(name, queue);
      return;
    }
    this.queues.delete(name);
    this.turns.delete(name);
  }
}

/** The queue's head. */
function first(queue: FairQueue): string | undefined {
  for (const waiter of queue.keys()) return waiter;
  return undefined;
}

/** Moves every deadline by `by` ms. */
function shift(queue: FairQueue, by: number): void {
  for (const [waiter, deadline] of queue) queue.set(waiter, deadline + by);
}

/** Drops heads whose deadline has passed at `time`, but `caller`; answers the new head. */
function dropDead(queue: FairQueue, time: number, caller?: string): string | undefined {
  for (const [waiter, deadline] of queue) {
    if (waiter === caller || deadline > time) return waiter;
    queue.delete(waiter);
  }
  return undefined;
}
