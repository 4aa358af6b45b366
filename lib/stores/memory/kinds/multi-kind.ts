import {
  GRANTED,
  type AcquireReply,
  type AcquireRequest,
  type LockTarget,
  type StoredHold,
} from '../../../store';
import { lockChannel } from '../channels';
import { remaining } from '../lock-table';
import { LockKind, membersOf } from './memory-kind';
import {
  freeExclusive,
  holdsExclusive,
  lockTtl,
  renewExclusive,
  takeExclusive,
} from './plain-kind';

/**
 * Groups of locks taken together (multi-acquire.lua, multi-release.lua): all or none, each
 * member an ordinary plain lock of the owner, its release announced on its own lock channel.
 */
export class MultiKind extends LockKind {
  /** Takes every member, or none: refused with the first busy member's index and lease. */
  acquire(request: AcquireRequest): AcquireReply {
    const { owner } = request;
    const names = membersOf(request);
    for (let busy = 0; busy < names.length; busy++) {
      const row = this.host.table.get(names[busy]);
      if (row !== undefined && !holdsExclusive(row, owner)) {
        return { granted: false, ttl: remaining(row.expiresAt), busy };
      }
    }
    for (const name of names) takeExclusive(this.host.table, name, owner, request.leaseTime);
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
      if (freeExclusive(this.host.table, name, hold.owner)) {
        freed = true;
        listeners = Math.max(listeners, this.host.publish(lockChannel(name)));
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
      .map((name) => renewExclusive(this.host.table, name, hold.owner, leaseTime))
      .every(Boolean);
  }

  /** The shortest remaining lease of the members, or null when any member is free. */
  remainingTtl(target: LockTarget): number | null {
    let shortest = Infinity;
    for (const name of membersOf(target)) {
      const ttl = lockTtl(this.host.table, name);
      if (ttl === null) return null;
      shortest = Math.min(shortest, ttl);
    }
    return shortest;
  }

  /** A member's lock channel: a group waits in the busy member's queue. */
  channel(target: LockTarget): string {
    return lockChannel(target.name);
  }
}
