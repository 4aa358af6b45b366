import type { AcquireReply, AcquireRequest, LockTarget, StoredHold } from '../../store';
import { lockChannel } from './channels';
import {
  freeExclusive,
  holdsExclusive,
  lockTtl,
  renewExclusive,
  takeExclusive,
} from './exclusive-locks';
import { GRANTED, type HoldKindStore, type Publish } from './hold-kind';
import { remaining, type LockTable } from './lock-table';

/** A group's member names (a target without `names` is a group of one). */
export function membersOf(target: LockTarget): readonly string[] {
  return target.names ?? [target.name];
}

/**
 * Groups of locks taken together (multi-acquire.lua, multi-release.lua): all or none, each
 * member an ordinary plain lock of the owner, its release announced on its own lock channel.
 */
export class MultiLocks implements HoldKindStore {
  constructor(
    private readonly table: LockTable,
    private readonly publish: Publish,
  ) {}

  /** Takes every member, or none: refused with the first busy member's index and lease. */
  acquire(request: AcquireRequest): AcquireReply {
    const { owner } = request;
    const names = membersOf(request);
    for (let busy = 0; busy < names.length; busy++) {
      const entry = this.table.get(names[busy]);
      if (entry !== undefined && !holdsExclusive(entry, owner)) {
        return { granted: false, ttl: remaining(entry.expiresAt), busy };
      }
    }
    for (const name of names) takeExclusive(this.table, name, owner, request.leaseTime);
    return GRANTED;
  }

  /**
   * Frees every member the owner still holds, telling each one's waiters: the most connections
   * told for a member, or null when some member was lost; undefined when none was held.
   */
  release(hold: StoredHold): number | null | undefined {
    let freed = false;
    let lost = false;
    let listeners = 0;
    for (const name of membersOf(hold)) {
      if (freeExclusive(this.table, name, hold.owner)) {
        freed = true;
        listeners = Math.max(listeners, this.publish(lockChannel(name)));
      } else {
        lost = true;
      }
    }
    if (!freed) return undefined;
    return lost ? null : listeners;
  }

  /** Renews every member still held; false when any was lost. */
  renew(hold: StoredHold, leaseTime: number): boolean {
    return membersOf(hold)
      .map((name) => renewExclusive(this.table, name, hold.owner, leaseTime))
      .every(Boolean);
  }

  /** The shortest remaining lease of the members, or null when any member is free. */
  remainingTtl(target: LockTarget): number | null {
    let shortest = Infinity;
    for (const name of membersOf(target)) {
      const ttl = lockTtl(this.table, name);
      if (ttl === null) return null;
      shortest = Math.min(shortest, ttl);
    }
    return shortest;
  }
}
