import type { AcquireReply, AcquireRequest, LockTarget, StoredHold } from '../../../store';
import type { LockTable } from '../lock-table';

/** Sends a message on a channel of the store; answers how many connections will receive it. */
export type Publish = (channel: string) => number;

/**
 * One kind of hold of a MemoryLockStore (the counterpart of the Redis store's kind file of the
 * same name): its acquire, release, renewal, lease query, force unlock and channel, each one
 * atomic step. One per kind and store (kinds/index.ts); the store dispatches by the kind's id.
 */
export interface MemoryKind {
  acquire(request: AcquireRequest): AcquireReply;
  /**
   * Frees the owner's hold: how many connections were told, or null when part of it was lost
   * (a group); undefined when the owner held nothing of it (a resent release then gets the
   * first answer from the store's latch).
   */
  release(hold: StoredHold): number | null | undefined;
  /** Restores the lease of a hold still owned; false when it is lost. */
  renew(hold: StoredHold, leaseTime: number): boolean;
  /** See LockStore.remainingTtl. */
  remainingTtl(target: LockTarget): number | null;
  /** See LockStore.forceUnlock. */
  forceUnlock(target: LockTarget): boolean;
  /**
   * Whether the target's name holds another type of object (a lock on a semaphore's name, a
   * semaphore on a held lock's), as Redis answers WRONGTYPE.
   */
  clashes(target: LockTarget): boolean;
  /** The channel a waiter `owner` for `target` listens on (see LockStore.channel). */
  channel(target: LockTarget, owner: string): string;
  /** FairQueuePort: a waiter that gives up leaves the queue. */
  leave?(request: AcquireRequest): void;
  /** PermitCountPort: the permits a caller with the target's limit could take now. */
  available?(target: LockTarget): number;
  /** KeptReleasePort: keeps the owner's hold `keepFor` ms from now, no notice; false when not held. */
  releaseKept?(hold: StoredHold, keepFor: number): boolean;
}

/** What the kinds of one store share. */
export interface MemoryKindHost {
  /** The lock names: plain, fair, group-member and read-write locks of a name are one row. */
  readonly table: LockTable;
  readonly publish: Publish;
  /** Whether a semaphore was ever taken under `name` (a lock cannot use the name). */
  isSemaphore(name: string): boolean;
  /**
   * Frees whatever lock lives under each of `names` (an exclusive lock with its fair queue, or a
   * read-write lock), telling its waiters; true when one was held.
   */
  forceUnlockLocks(names: readonly string[]): boolean;
}

/** A group's member names (a target without `names` is a group of one). */
export function membersOf(target: LockTarget): readonly string[] {
  return target.names ?? [target.name];
}

/**
 * A kind of lock (every kind but the permit): its row lives in the lock table, a semaphore's
 * name refuses it, and a force unlock frees whatever lock lives under its names.
 */
export abstract class LockKind implements MemoryKind {
  constructor(protected readonly host: MemoryKindHost) {}

  abstract acquire(request: AcquireRequest): AcquireReply;
  abstract release(hold: StoredHold): number | null | undefined;
  abstract renew(hold: StoredHold, leaseTime: number): boolean;
  abstract remainingTtl(target: LockTarget): number | null;
  abstract channel(target: LockTarget, owner: string): string;

  forceUnlock(target: LockTarget): boolean {
    return this.host.forceUnlockLocks(membersOf(target));
  }

  clashes(target: LockTarget): boolean {
    return membersOf(target).some((name) => this.host.isSemaphore(name));
  }
}
