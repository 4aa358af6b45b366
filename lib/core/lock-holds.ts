import type { LockLostError } from '../errors';
import type { HoldKeeper, LockHold } from './lock-hold';
import type { LockStore, LockTarget } from '../store';
import { kindOf } from './kinds';
import { unrenewedReason, Watchdog } from './watchdog';
import { now } from '../time/clock';

/** What the holds report to the engine. */
export interface HoldsDriver {
  /** A hold was lost while held (its signal is aborted already). Called once per hold. */
  lost(error: LockLostError): void;
  /** A renewal call failed; renewal goes on. */
  renewalFailed(error: unknown): void;
  /** Runs `fn` outside every lock's call chain. */
  outside<T>(fn: () => T): T;
}

/**
 * The holds this process has in the store (several per name for read holds and permits; a
 * group under each member's name): each kept alive by the watchdog of its lease (the engine's,
 * or a leadership's own), or timed by its explicit lease. Losing a hold aborts its signal and reports it, outside every
 * call chain, so listeners never run as another chain's owner.
 */
export class LockHolds implements HoldKeeper {
  /** Holds with an explicit lease; the watchdog keeps the others (the two never share one). */
  private readonly leased = new Set<LockHold>();
  /** The holds under each name: one hold as itself (the common case: no set built), more as a set. */
  private readonly byName = new Map<string, LockHold | Set<LockHold>>();
  /** The engine's watchdog, for the engine's lease. */
  private readonly watchdog: Watchdog;
  /** Watchdogs of other leases (a leadership's own `leaseTime`), made on first use. */
  private readonly otherWatchdogs = new Map<number, Watchdog>();

  constructor(
    private readonly store: LockStore,
    leaseTime: number,
    private readonly driver: HoldsDriver,
  ) {
    this.watchdog = this.newWatchdog(leaseTime);
  }

  /** How many locks this process holds. */
  get size(): number {
    let size = this.leased.size + this.watchdog.size;
    for (const watchdog of this.otherWatchdogs.values()) size += watchdog.size;
    return size;
  }

  /** Every hold, for shutdown. */
  all(): LockHold[] {
    const holds = [...this.watchdog.values(), ...this.leased];
    for (const watchdog of this.otherWatchdogs.values()) holds.push(...watchdog.values());
    return holds;
  }

  /** Starts keeping `hold` (renewed, or timed by its explicit lease). */
  add(hold: LockHold): void {
    hold.keeper = this;
    if (hold.names === undefined) this.index(hold.name, hold);
    else for (const name of hold.names) this.index(name, hold);
    if (hold.watchdog) {
      this.watchdogOf(hold).add(hold);
      return;
    }
    this.leased.add(hold);
    hold.expiryTimer = this.driver.outside(() =>
      setTimeout(() => this.lose(hold, leaseEndedReason(hold)), hold.validUntil - now()),
    );
    hold.expiryTimer.unref();
  }

  /** The holds of `name` this process has (as a group member too). */
  named(name: string): readonly LockHold[] {
    const holds = this.byName.get(name);
    if (holds === undefined) return [];
    return holds instanceof Set ? [...holds] : [holds];
  }
  /**
   * Loses those of `before` (this process's holds of `target`'s name, taken before a forceUnlock
   * of it) that are the same lock object as `target`.
   */
  loseForced(before: readonly LockHold[], target: LockTarget): void {
    const { object } = kindOf(target.kind);
    for (const hold of before) {
      if (kindOf(hold.kind).object === object) this.lose(hold, 'it was deleted by forceUnlock()');
    }
  }

  /** Whether this process holds any of `names` (in any chain, as a group member too). */
  holdsAny(names: readonly string[]): boolean {
    return names.some((name) => this.byName.has(name));
  }

  /** Stops keeping `hold` (released, or being released). */
  remove(hold: LockHold): void {
    if (hold.names === undefined) this.unindex(hold.name, hold);
    else for (const name of hold.names) this.unindex(name, hold);
    if (hold.watchdog) {
      this.watchdogOf(hold).remove(hold);
      return;
    }
    this.leased.delete(hold);
    clearTimeout(hold.expiryTimer);
  }

  private index(name: string, hold: LockHold): void {
    const holds = this.byName.get(name);
    if (holds === undefined) this.byName.set(name, hold);
    else if (holds instanceof Set) holds.add(hold);
    else this.byName.set(name, new Set([holds, hold]));
  }

  /** Forgets `hold` under `name`; a no-op when it is not there (a hold may be removed twice). */
  private unindex(name: string, hold: LockHold): void {
    const holds = this.byName.get(name);
    if (holds === hold) this.byName.delete(name);
    else if (holds instanceof Set && holds.delete(hold) && holds.size === 0)
      this.byName.delete(name);
  }

  /** A read of `hold` found its lease deadline passed before a timer did (a stalled loop). */
  expired(hold: LockHold): void {
    this.lose(hold, hold.watchdog ? unrenewedReason(hold, now()) : leaseEndedReason(hold));
  }

  /** Marks `hold` lost for `reason` and reports it, unless it was lost or released before. */
  lose(hold: LockHold, reason: string): void {
    this.driver.outside(() => {
      if (!hold.lose(reason)) return;
      this.remove(hold);
      hold.trace?.lost(hold.lostError!);
      this.driver.lost(hold.lostError!);
    });
  }

  /** Stops the watchdogs (shutdown). */
  stop(): void {
    this.watchdog.stop();
    for (const watchdog of this.otherWatchdogs.values()) watchdog.stop();
  }

  /** The watchdog that renews leases of `hold`'s length. */
  private watchdogOf(hold: LockHold): Watchdog {
    if (hold.leaseTime === this.watchdog.leaseTime) return this.watchdog;
    let watchdog = this.otherWatchdogs.get(hold.leaseTime);
    if (watchdog === undefined) {
      watchdog = this.newWatchdog(hold.leaseTime);
      this.otherWatchdogs.set(hold.leaseTime, watchdog);
    }
    return watchdog;
  }

  private newWatchdog(leaseTime: number): Watchdog {
    return new Watchdog(leaseTime, {
      renew: (holds, lease) => this.store.renew(holds, lease),
      lost: (hold, reason) => this.lose(hold, reason),
      failed: (error) => this.driver.renewalFailed(error),
      outside: <T>(fn: () => T): T => this.driver.outside(fn),
    });
  }
}

/** Why a hold with an explicit lease was lost when it ran out. */
function leaseEndedReason(hold: LockHold): string {
  return `its explicit lease of ${hold.leaseTime} ms expired`;
}
