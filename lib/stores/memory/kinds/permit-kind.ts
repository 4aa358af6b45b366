import { now } from '../../../time/clock';
import {
  GRANTED,
  type AcquireReply,
  type AcquireRequest,
  type LockTarget,
  type StoredHold,
} from '../../../store';
import { permitChannel } from '../channels';
import { remaining, type LockTable } from '../lock-table';
import type { MemoryKind, Publish } from './memory-kind';

/** A semaphore's leased permits: owner → when its lease ends (clock ms; Infinity: none). */
type Permits = Map<string, number>;

/**
 * Semaphores of leased permits (semaphore-*.lua). The limit is not stored: each call brings
 * its target's `permits` and is granted while fewer than that many permits are held, whoever
 * holds them. A permit past its lease is gone (it comes back to the others); every step drops
 * those first.
 */
export class PermitKind implements MemoryKind {
  private readonly semaphores = new Map<string, Permits>();
  /** Every name a permit was taken under: Redis keeps a semaphore's key, so it stays taken. */
  private readonly names = new Set<string>();

  constructor(
    /** The lock names: a semaphore cannot use a held lock's. */
    private readonly table: LockTable,
    private readonly publish: Publish,
  ) {}

  /**
   * Grants a permit while fewer than the limit are held (a resent acquire of a holder only
   * renews it); always `shared` (the next waiter tries at once). Refused: ms until the permit whose end frees
   * the caller's limit expires.
   */
  acquire(request: AcquireRequest): AcquireReply {
    const { name, owner } = request;
    const limit = limitOf(request);
    const time = now();
    const permits = this.live(name, time);
    if (permits.has(owner) || permits.size < limit) {
      permits.set(owner, time + request.leaseTime);
      this.semaphores.set(name, permits);
      this.names.add(name);
      return GRANTED;
    }
    const ends = [...permits.values()].sort((a, b) => a - b);
    return { granted: false, ttl: remaining(ends[permits.size - limit]) };
  }

  /** Whether a permit was ever taken under `name` (a lock cannot use the name). */
  has(name: string): boolean {
    return this.names.has(name);
  }

  /** Returns the owner's permit, telling the semaphore's waiters (how many). */
  release(hold: StoredHold): number | undefined {
    const permits = this.live(hold.name, now());
    if (!permits.delete(hold.owner)) return undefined;
    if (permits.size === 0) this.semaphores.delete(hold.name);
    return this.publish(permitChannel(hold.name));
  }

  /** Restores the lease of a permit still held; one past its lease is never revived. */
  renew(hold: StoredHold, leaseTime: number): boolean {
    const time = now();
    const permits = this.live(hold.name, time);
    if (!permits.has(hold.owner)) return false;
    permits.set(hold.owner, time + leaseTime);
    return true;
  }

  /** The longest remaining lease of the held permits (until all are back), or null: none. */
  remainingTtl(target: LockTarget): number | null {
    const permits = this.live(target.name, now());
    return permits.size === 0 ? null : remaining(Math.max(...permits.values()));
  }

  /** PermitCountPort: how many more permits a caller with the target's limit could take now. */
  available(target: LockTarget): number {
    return Math.max(0, limitOf(target) - this.live(target.name, now()).size);
  }

  /** Revokes every permit, telling the waiters when one was held: true when one was. */
  forceUnlock(target: LockTarget): boolean {
    const { name } = target;
    const revoked = this.live(name, now()).size > 0;
    this.semaphores.delete(name);
    if (revoked) this.publish(permitChannel(name));
    return revoked;
  }

  /** A held lock's name refuses a semaphore. */
  clashes(target: LockTarget): boolean {
    return this.table.get(target.name) !== undefined;
  }

  /** Releases of permits of the semaphore. */
  channel(target: LockTarget): string {
    return permitChannel(target.name);
  }

  /** The semaphore's permits within their lease (the others dropped; new: empty, not stored). */
  private live(name: string, time: number): Permits {
    const permits = this.semaphores.get(name);
    if (permits === undefined) return new Map();
    for (const [owner, end] of permits) if (end <= time) permits.delete(owner);
    if (permits.size === 0) this.semaphores.delete(name);
    return permits;
  }
}

/** The limit a call uses: its target's `permits` (at least 1). */
function limitOf(target: LockTarget): number {
  return Math.max(1, target.permits ?? 1);
}
