import { now } from '../../time/clock';

/**
 * How long this process holds back its next attempt on a lock after its release was announced
 * to other processes, at most, ms: about the time a woken waiter needs to read the notice and
 * send its attempt. Without it the releasing process, whose next acquire starts on the
 * release's own answer, wins nearly every race against the processes the notice woke (they read
 * it a tick later), and starves them when they share its event loop.
 */
export const HANDOFF_HOLD_BACK = 2;

/**
 * The hold-back of a queue's attempts after its own process released the lock to others
 * (HANDOFF_HOLD_BACK). It ends at the first notice that is not one of this process's own
 * releases: another process has released the lock since (or passed its turn on), so the
 * processes the release woke have had their chance; else when its time runs out.
 */
export class ReleaseHoldBack {
  /** Notices still to come of releases this process sent while subscribed. */
  private echoes = 0;

  constructor(
    /** Until when (clock ms) attempts wait; 0 for no hold-back. */
    private until = 0,
  ) {}

  /** A release of the lock goes out; `listening`: its notice will reach this queue. */
  releasing(listening: boolean): void {
    if (listening) this.echoes++;
  }

  /** The release was announced to other processes: hold back until `until` (clock ms). */
  hold(until: number): void {
    this.until = until;
  }

  /** A notice of the lock came: the hold-back ends unless it is this process's own release's. */
  noticed(): void {
    if (this.echoes > 0) this.echoes--;
    else this.until = 0;
  }

  /** Notices may have been lost (a reconnect): none is counted as this process's own. */
  reset(): void {
    this.echoes = 0;
  }

  /** How long attempts still wait, ms (0 or less: none). */
  remaining(): number {
    return this.until - now();
  }
}
