import type { HoldKind } from '../../store';
import type { LockMode } from '../options/lock-options';

/**
 * What a call chain holds, for re-entry: plain and fair locks (and a group's members) of one
 * name are one exclusive lock; the read and the write hold of a read-write lock, and a
 * semaphore's permit, are each their own. A held entry is found by this family and its name,
 * compared apart, so no key can pass for another kind's (any character may be in a key).
 */
export type HoldFamily = 'lock' | 'read' | 'write' | 'permit';

/**
 * The local wait queues (one per release channel): plain locks (and groups waiting for one
 * member), read-write locks (readers and writers together), semaphores. A queue is found by
 * this family and the lock's name, kept apart (see HoldFamily).
 */
export type QueueFamily = 'lock' | 'rw' | 'permit';

/**
 * One kind of hold as the engine sees it: every fact about a kind the engine acts on, so that
 * no engine code switches on a kind's id. One descriptor per kind (this folder); a store's side
 * of the kind is its kind file in `stores/<store>/kinds/`.
 */
export interface KindDescriptor {
  /** The kind's id, as the store seam carries it (`LockTarget.kind`). */
  readonly id: HoldKind;
  /** Re-entry: what a chain holds through a hold of this kind (see HoldFamily). */
  readonly family: HoldFamily;
  /** Waiting: the local queue its waiters share (see QueueFamily). */
  readonly queue: QueueFamily;
  /**
   * What lives under its name in the store: a lock (plain, fair, read-write, a group's member:
   * one object) or a semaphore. A force unlock of one loses this process's holds of the same.
   */
  readonly object: 'lock' | 'semaphore';
  /** Others may hold it at once too (a read hold, a permit): a waiter's turn passes on at once. */
  readonly shared: boolean;
  /** The read-write mode of its holds (`LockHandle.mode`); undefined for other kinds. */
  readonly mode: LockMode | undefined;
  /**
   * Granted in the order of a queue in the store (takeFair: a waiter keeps its owner id and
   * waits on its own channel, the placeTimeout it passes bounds its place). `LockHandle.fair`.
   */
  readonly fair: boolean;
  /** Several names taken together, all or none (GroupAcquirer). */
  readonly group: boolean;
  /** Refused with LockUpgradeError inside a hold of this family of the same name. */
  readonly refusedInside: HoldFamily | undefined;
  /**
   * Taken with the owner id of the chain's hold of this family of the same name, when it has one
   * (a read inside a write: a downgrade, which never waits for others).
   */
  readonly ownerFrom: HoldFamily | undefined;
  /**
   * The families of held handles of the same name a new call of this kind would wait for (the
   * self-deadlock check of ChainHandles); empty: it never waits for a handle.
   */
  readonly waitsFor: readonly HoldFamily[];
  /**
   * After this process releases a hold that other processes were told of, its next local
   * attempt holds back briefly (see LockWaiters.released). False when a release tells only the
   * one whose turn it is (a fair queue's head).
   */
  readonly holdBack: boolean;
}

/** The families an exclusive hold waits for: every lock's (a permit is another object). */
export const LOCK_FAMILIES: readonly HoldFamily[] = ['lock', 'read', 'write'];
