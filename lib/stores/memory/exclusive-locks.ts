import type { AcquireReply, AcquireRequest, LockTarget, StoredHold } from '../../store';
import { lockChannel } from './channels';
import type { HoldKindStore, Publish } from './hold-kind';
import { remaining, type LockEntry, type LockTable } from './lock-table';

/** Whether `owner` holds the exclusive lock `entry` (a read-write lock is never one). */
export function holdsExclusive(entry: LockEntry | undefined, owner: string): boolean {
  return entry?.type === 'exclusive' && entry.owner === owner;
}

/**
 * Takes the exclusive lock `name` for `owner` if free, or restores its lease if `owner` holds
 * it already (only a resent acquire can find it so). Answers the lock that refused it (held by
 * another owner, or a read-write lock), undefined when taken.
 */
export function takeExclusive(
  table: LockTable,
  name: string,
  owner: string,
  leaseTime: number,
): LockEntry | undefined {
  const entry = table.get(name);
  if (entry === undefined) {
    table.add(name, { type: 'exclusive', owner, expiresAt: 0, timer: undefined }, leaseTime);
  } else if (holdsExclusive(entry, owner)) {
    table.lease(name, entry, leaseTime);
  } else {
    return entry;
  }
  return undefined;
}

/** Frees `owner`'s exclusive lock `name`: true, or false when it does not hold it. */
export function freeExclusive(table: LockTable, name: string, owner: string): boolean {
  const entry = table.get(name);
  if (entry === undefined || !holdsExclusive(entry, owner)) return false;
  table.delete(name, entry);
  return true;
}

/** Restores the lease of `owner`'s exclusive lock `name`: false when it does not hold it. */
export function renewExclusive(
  table: LockTable,
  name: string,
  owner: string,
  leaseTime: number,
): boolean {
  const entry = table.get(name);
  if (entry === undefined || !holdsExclusive(entry, owner)) return false;
  table.lease(name, entry, leaseTime);
  return true;
}

/** The remaining lease of whatever lock lives under `name` (ms), or null when free. */
export function lockTtl(table: LockTable, name: string): number | null {
  const entry = table.get(name);
  return entry === undefined ? null : remaining(entry.expiresAt);
}

/**
 * Plain locks (acquire.lua, release.lua, renew.lua): one owner, a lease, a release notice on
 * the lock's channel, and fencing tokens when asked.
 */
export class PlainLocks implements HoldKindStore {
  /** The last fencing token issued: one counter for every lock, so each lock's tokens grow. */
  private lastToken = 0;

  constructor(
    private readonly table: LockTable,
    private readonly publish: Publish,
  ) {}

  acquire(request: AcquireRequest): AcquireReply {
    const busy = takeExclusive(this.table, request.name, request.owner, request.leaseTime);
    if (busy !== undefined) return { granted: false, ttl: remaining(busy.expiresAt) };
    return { granted: true, fencingToken: request.fencing ? ++this.lastToken : undefined };
  }

  release(hold: StoredHold): number | undefined {
    if (!freeExclusive(this.table, hold.name, hold.owner)) return undefined;
    return this.publish(lockChannel(hold.name));
  }

  renew(hold: StoredHold, leaseTime: number): boolean {
    return renewExclusive(this.table, hold.name, hold.owner, leaseTime);
  }

  remainingTtl(target: LockTarget): number | null {
    return lockTtl(this.table, target.name);
  }
}
