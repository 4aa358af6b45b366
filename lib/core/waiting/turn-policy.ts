/** The most releases a process counts itself early by (its hold-back is capped at that many steps). */
const MAX_EARLY = 8;

/**
 * Fair turns between processes waiting for one lock. Redis delivers a release notice to
 * subscribers in a fixed order, so left alone the same process would win nearly every race.
 * Once this process lost such a race or released the lock to other processes (others want the
 * lock too), a process that took the lock counts itself early until it has seen as many
 * releases as there were other processes listening when it last released (what PUBLISH
 * counted): the others take their turn first.
 * How early it is ranks it: the process that won longest ago is least early, so hold-backs
 * proportional to it make the held-back processes try in the order of their last wins, not in
 * Redis' delivery order. A wrong count costs at most a short hold-back, never a missed handoff.
 */
export class TurnPolicy {
  /**
   * Others want the lock: a release notice was answered here but another client took the lock
   * first, or a release of this process was heard by others.
   */
  private contended = false;
  /** Release notices seen since this process last took the lock. */
  private releasesSinceWin = Infinity;
  /** Processes that received this process's last release notice of the lock (itself included). */
  private listeners = 1;

  /**
   * A release notice arrived: by how many releases this process would take the lock too early
   * (at most MAX_EARLY). Positive: others are due first, hold back. 0: its turn. Negative: its
   * turn is overdue, or there is no turn-taking (never lost a race): try at once.
   */
  noticed(): number {
    const early = this.contended ? this.listeners - 1 - this.releasesSinceWin : -1;
    this.releasesSinceWin++;
    return Math.min(early, MAX_EARLY);
  }

  /**
   * Whether this process takes turns with others: its last release was heard by other
   * processes. Only then is a turn it lets pass one the others wait for.
   */
  get rotating(): boolean {
    return this.contended && this.listeners > 1;
  }

  /** This process took the lock. */
  won(): void {
    this.releasesSinceWin = 0;
  }

  /** An attempt that answered a release notice found the lock taken by another client. */
  lostRace(): void {
    this.contended = true;
  }

  /** This process released the lock; `listeners` processes were told. */
  released(listeners: number): void {
    this.listeners = listeners;
    // Others listened: they wait for the lock (an idle listener leaves at its next notice).
    if (listeners > 1) this.contended = true;
  }
}
