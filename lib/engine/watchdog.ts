import type { LockHold } from './lock-hold';

/** Most locks renewed by one script call (Redisson batches 100 per call as well). */
export const RENEW_BATCH_SIZE = 100;

/** What the watchdog needs from the engine. */
export interface WatchdogDriver {
  /** Renews a batch in one script call; one boolean per hold: still held. */
  renew(holds: readonly LockHold[], leaseTime: number): Promise<boolean[]>;
  /** A hold turned out to be lost. */
  lost(hold: LockHold, reason: string): void;
  /** A renewal call failed (e.g. Redis unreachable); renewal goes on. */
  failed(error: unknown): void;
}

/**
 * Keeps watchdog-leased locks alive: one timer for all of them, firing every third of the
 * lease, renewing up to RENEW_BATCH_SIZE locks per script call. Every tick checks every lock:
 * one not confirmed for a whole lease is reported lost, also while its renewal call still
 * hangs (no new call is sent for it until that one settles). A failed call does not stop
 * renewal; a lock reported gone is reported lost. The timer is unref'd and stops when no lock
 * is held.
 */
export class Watchdog {
  private readonly holds = new Set<LockHold>();
  /** Holds whose renewal call has not settled yet. */
  private readonly renewing = new Set<LockHold>();
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly leaseTime: number,
    private readonly driver: WatchdogDriver,
  ) {}

  add(hold: LockHold): void {
    this.holds.add(hold);
    if (this.timer === undefined) {
      this.timer = setInterval(() => this.tick(), Math.floor(this.leaseTime / 3));
      this.timer.unref();
    }
  }

  /** Stops renewing `hold`. The timer itself stops at the next tick with nothing to renew. */
  remove(hold: LockHold): void {
    this.holds.delete(hold);
    this.renewing.delete(hold);
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  /** One round: reports expired holds, sends renewals for the others not being renewed. */
  tick(): void {
    if (this.holds.size === 0) {
      this.stop();
      return;
    }
    const now = Date.now();
    const due: LockHold[] = [];
    for (const hold of this.holds) {
      if (now >= hold.validUntil) {
        this.remove(hold);
        this.driver.lost(
          hold,
          `no renewal was confirmed for a whole lease (${hold.leaseTime} ms), so it has expired`,
        );
      } else if (!this.renewing.has(hold)) {
        due.push(hold);
      }
    }
    for (let i = 0; i < due.length; i += RENEW_BATCH_SIZE) {
      void this.renewBatch(due.slice(i, i + RENEW_BATCH_SIZE));
    }
  }

  private async renewBatch(batch: LockHold[]): Promise<void> {
    for (const hold of batch) this.renewing.add(hold);
    const sentAt = Date.now();
    let held: boolean[];
    try {
      held = await this.driver.renew(batch, this.leaseTime);
    } catch (error) {
      this.driver.failed(error);
      return;
    } finally {
      for (const hold of batch) this.renewing.delete(hold);
    }
    batch.forEach((hold, i) => {
      // Released or reported lost meanwhile: a late answer never brings it back.
      if (!this.holds.has(hold)) return;
      if (held[i]) {
        hold.validUntil = Math.max(hold.validUntil, sentAt + this.leaseTime);
      } else {
        this.remove(hold);
        this.driver.lost(hold, 'it expired or was deleted in Redis (renewal found no owner)');
      }
    });
  }
}
