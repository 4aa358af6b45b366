import type { AcquireReply, AcquireRequest, LockTarget, StoredHold } from '../../store';

/** Sends a message on a channel of the store; answers how many connections will receive it. */
export type Publish = (channel: string) => number;

/** One kind of hold of a MemoryLockStore: its acquire, release, renewal and lease query. */
export interface HoldKindStore {
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
}

/** A granted acquire without a fencing token. */
export const GRANTED: AcquireReply = { granted: true, fencingToken: undefined };
