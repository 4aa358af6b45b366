import { now } from '../time/clock';
import type { LockHold } from './lock-hold';

/** What the watchdog needs from the engine. */
export interface WatchdogDriver {
  /** Renews every due hold in one store call; per hold: held, lost, or the call's error. */
  renew(holds: readonly LockHold[], leaseTime: number): Promise<(boolean | Error)[]>;
  /** A hold turned out to be lost. */
  lost(hold: LockHold, reason: string): void;
  /** A renewal call failed (e.g. Redis unreachable); renewal goes on. Once per round. */
  failed(error: unknown): void;
  /** Runs `fn` outside every lock's call chain (timers created there carry no chain). */
  outside<T>(fn: () => T): T;
}

/**
 * Keeps watchdog-leased locks alive: one timer for all of them, renewing every third of the
 * lease, every due lock in one store call (the store batches them per script call and node). A hold not confirmed for a whole lease is
 * lost: the timer also fires at the earliest moment a lease can end, so a loss is reported when
 * it happens, also while a renewal hangs. Before that verdict, replies already received are
 * read (a stalled event loop may have kept them waiting). A hold older than its maxHold is
 * renewed no more: its lease runs out and it is lost. Time is monotonic; the timer is
 * unref'd and stops when no lock is held.
 */
export class Watchdog {
  private readonly holds = new Set<LockHold>();
  /** Holds whose renewal call has not settled yet, with when it was sent. */
  private readonly renewing = new Map<LockHold, number>();
  private readonly period: number;
  private timer: NodeJS.Timeout | undefined;
  private nextRenewal = 0;
  /** When the timer fires. */
  private timerAt = Infinity;

  constructor(
    /** The lease it renews, ms. */
    readonly leaseTime: number,
    private readonly driver: WatchdogDriver,
  ) {
    this.period = Math.floor(leaseTime / 3);
  }

  /** How many holds it keeps. */
  get size(): number {
    return this.holds.size;
  }

  /** The holds it keeps. */
  values(): IterableIterator<LockHold> {
    return this.holds.values();
  }

  add(hold: LockHold): void {
    this.holds.add(hold);
    if (this.timer === undefined) this.nextRenewal = now() + this.period;
    // A grant answered late has less lease left than usual: renew it now, judge it in time.
    if (hold.validUntil < this.nextRenewal + this.period) void this.renewBatch([hold]);
    const at = Math.min(this.nextRenewal, hold.validUntil);
    if (this.timer === undefined || at < this.timerAt) this.schedule(at);
  }

  /** Stops renewing `hold`. The timer itself stops at its next firing with nothing to renew. */
  remove(hold: LockHold): void {
    this.holds.delete(hold);
    this.renewing.delete(hold);
  }

  stop(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  /** One round: finds expired holds, and every period sends renewals for the others. */
  tick(): void {
    this.timer = undefined;
    if (this.holds.size === 0) return;
    const time = now();
    const renewNow = time >= this.nextRenewal - 1;
    const expired: LockHold[] = [];
    const due: LockHold[] = [];
    let earliest = Infinity;
    for (const hold of this.holds) {
      if (time >= hold.validUntil) {
        expired.push(hold);
        continue;
      }
      earliest = Math.min(earliest, hold.validUntil);
      if (renewNow && !this.pending(hold, time) && !pastMaxHold(hold, time)) due.push(hold);
    }
    if (renewNow) this.nextRenewal = time + this.period;
    if (due.length > 0) void this.renewBatch(due);
    // Replies that arrived during a stall are read in this turn's I/O phase: judge after it.
    if (expired.length > 0) setImmediate(() => this.judge(expired));
    this.schedule(Math.min(this.nextRenewal, earliest));
  }

  private schedule(at: number): void {
    clearTimeout(this.timer);
    this.timerAt = at;
    this.timer = this.driver.outside(() =>
      setTimeout(() => this.tick(), Math.max(0, Math.ceil(at - now()))),
    );
    this.timer.unref();
  }

  private judge(expired: readonly LockHold[]): void {
    const time = now();
    const saved: LockHold[] = [];
    for (const hold of expired) {
      if (!this.holds.has(hold)) continue;
      if (time < hold.validUntil) {
        // A late reply confirmed it after all; its next renewal is due now, not next period.
        if (!this.pending(hold, time) && !pastMaxHold(hold, time)) saved.push(hold);
        continue;
      }
      this.remove(hold);
      this.driver.lost(hold, unrenewedReason(hold, time));
    }
    if (saved.length > 0) void this.renewBatch(saved);
    if (this.holds.size > 0 && this.timer === undefined) this.schedule(this.nextRenewal);
  }

  /** A renewal of `hold` is on its way, sent less than a period ago (an older one may never answer). */
  private pending(hold: LockHold, time: number): boolean {
    const sent = this.renewing.get(hold);
    return sent !== undefined && time - sent < this.period;
  }

  private async renewBatch(batch: LockHold[]): Promise<void> {
    const sentAt = now();
    for (const hold of batch) this.renewing.set(hold, sentAt);
    let held: (boolean | Error)[];
    try {
      held = await this.driver.renew(batch, this.leaseTime);
    } catch (error) {
      this.driver.failed(error);
      return;
    } finally {
      for (const hold of batch) if (this.renewing.get(hold) === sentAt) this.renewing.delete(hold);
    }
    const failure = held.find((result) => result instanceof Error);
    if (failure) this.driver.failed(failure);
    batch.forEach((hold, i) => {
      // Released or reported lost meanwhile: a late answer never brings it back.
      if (!this.holds.has(hold) || held[i] instanceof Error) return;
      if (held[i]) {
        hold.validUntil = Math.max(hold.validUntil, sentAt + this.leaseTime);
      } else {
        this.remove(hold);
        this.driver.lost(hold, 'it expired or was deleted in Redis (renewal found no owner)');
      }
    });
  }
}

/** Whether `hold` is older than its maxHold at `time`: the watchdog renews it no more. */
function pastMaxHold(hold: LockHold, time: number): boolean {
  return time - hold.sentAt >= hold.maxHold;
}

/** Why a watchdog hold was lost at `time` when no renewal was confirmed for a whole lease. */
export function unrenewedReason(hold: LockHold, time: number): string {
  if (pastMaxHold(hold, time)) {
    return `it was held longer than its maxHold (${hold.maxHold} ms), so the watchdog stopped renewing it and its lease of ${hold.leaseTime} ms ran out`;
  }
  return `no renewal was confirmed for a whole lease (${hold.leaseTime} ms), so it has expired`;
}
