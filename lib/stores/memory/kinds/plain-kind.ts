import type { AcquireReply, AcquireRequest, LockTarget, StoredHold } from '../../../store';
import { lockChannel } from '../channels';
import { remaining, type LockRow, type LockTable } from '../lock-table';
import { LockKind } from './memory-kind';

/** Whether `owner` holds the exclusive lock `row` (a read-write lock is never one). */
export function holdsExclusive(row: LockRow | undefined, owner: string): boolean {
  return row?.type === 'exclusive' && row.owner === owner;
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
): LockRow | undefined {
  const row = table.get(name);
  if (row === undefined) {
    table.add(name, { type: 'exclusive', owner, expiresAt: 0, timer: undefined }, leaseTime);
  } else if (holdsExclusive(row, owner)) {
    table.lease(name, row, leaseTime);
  } else {
    return row;
  }
  return undefined;
}

/** Frees `owner`'s exclusive lock `name`: true, or false when it does not hold it. */
export function freeExclusive(table: LockTable, name: string, owner: string): boolean {
  const row = table.get(name);
  if (row === undefined || !holdsExclusive(row, owner)) return false;
  table.delete(name, row);
  return true;
}

/** Restores the lease of `owner`'s exclusive lock `name`: false when it does not hold it. */
export function renewExclusive(
  table: LockTable,
  name: string,
  owner: string,
  leaseTime: number,
): boolean {
  const row = table.get(name);
  if (row === undefined || !holdsExclusive(row, owner)) return false;
  table.lease(name, row, leaseTime);
  return true;
}

/** The remaining lease of whatever lock lives under `name` (ms), or null when free. */
export function lockTtl(table: LockTable, name: string): number | null {
  const row = table.get(name);
  return row === undefined ? null : remaining(row.expiresAt);
}

/**
 * Plain locks (acquire.lua, release.lua, release-kept.lua, renew.lua): one owner, a lease, a
 * release notice on the lock's channel, and fencing tokens when asked.
 */
export class PlainKind extends LockKind {
  /** The last fencing token issued: one counter for every lock, so each lock's tokens grow. */
  private lastToken = 0;

  acquire(request: AcquireRequest): AcquireReply {
    const busy = takeExclusive(this.host.table, request.name, request.owner, request.leaseTime);
    if (busy !== undefined) return { granted: false, ttl: remaining(busy.expiresAt) };
    return { granted: true, fencingToken: request.fencing ? ++this.lastToken : undefined };
  }

  release(hold: StoredHold): number | undefined {
    if (!freeExclusive(this.host.table, hold.name, hold.owner)) return undefined;
    return this.host.publish(lockChannel(hold.name));
  }

  renew(hold: StoredHold, leaseTime: number): boolean {
    return renewExclusive(this.host.table, hold.name, hold.owner, leaseTime);
  }

  /**
   * release-kept.lua: the lock stays, its lease set to `keepFor`, under the owner renamed
   * `<owner>:kept` (no renewal finds it); nobody is told.
   */
  releaseKept(hold: StoredHold, keepFor: number): boolean {
    const table = this.host.table;
    const row = table.get(hold.name);
    if (row === undefined || !holdsExclusive(row, hold.owner)) return false;
    table.delete(hold.name, row);
    const owner = `${hold.owner}:kept`;
    table.add(hold.name, { type: 'exclusive', owner, expiresAt: 0, timer: undefined }, keepFor);
    return true;
  }

  remainingTtl(target: LockTarget): number | null {
    return lockTtl(this.host.table, target.name);
  }

  /** Releases of the lock (Redisson's lock channel). */
  channel(target: LockTarget): string {
    return lockChannel(target.name);
  }
}
