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
 * lease, renewing up to RENEW_BATCH_SIZE locks per script call. A failed call does not stop
 * renewal; a lock reported gone, or not confirmed for a whole lease, is reported lost.
 * The timer is unref'd and stops when no lock is held.
 */
export class Watchdog {
  private readonly holds = new Set<LockHold>();
  private timer: NodeJS.Timeout | undefined;
  private renewing = false;

  constructor(
    private readonly leaseTime: number,
    private readonly driver: WatchdogDriver,
  ) {}

  add(hold: LockHold): void {
    this.holds.add(hold);
    if (this.timer === undefined) {
      this.timer = setInterval(() => void this.tick(), Math.floor(this.leaseTime / 3));
      this.timer.unref();
    }
  }

  /** Stops renewing `hold`. The timer itself stops at the next tick with nothing to renew. */
  remove(hold: LockHold): void {
    this.holds.delete(hold);
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  /** One renewal round. */
  async tick(): Promise<void> {
    if (this.renewing) return;
    if (this.holds.size === 0) {
      this.stop();
      return;
    }
    this.renewing = true;
    try {
      const now = Date.now();
      const due: LockHold[] = [];
      for (const hold of this.holds) {
        if (now >= hold.validUntil) {
          this.remove(hold);
          this.driver.lost(
            hold,
            `no renewal was confirmed for a whole lease (${hold.leaseTime} ms), so it has expired`,
          );
        } else {
          due.push(hold);
        }
      }
      const rounds: Promise<void>[] = [];
      for (let i = 0; i < due.length; i += RENEW_BATCH_SIZE) {
        rounds.push(this.renewBatch(due.slice(i, i + RENEW_BATCH_SIZE)));
      }
      await Promise.all(rounds);
    } finally {
      this.renewing = false;
    }
  }

  private async renewBatch(batch: LockHold[]): Promise<void> {
    const sentAt = Date.now();
    let held: boolean[];
    try {
      held = await this.driver.renew(batch, this.leaseTime);
    } catch (error) {
      this.driver.failed(error);
      return;
    }
    batch.forEach((hold, i) => {
      if (hold.released) return;
      if (held[i]) {
        hold.validUntil = sentAt + this.leaseTime;
      } else {
        this.remove(hold);
        this.driver.lost(hold, 'it expired or was deleted in Redis (renewal found no owner)');
      }
    });
  }
}
