/**
 * Fair turns between processes waiting for one lock. Redis delivers a release notice to
 * subscribers in a fixed order, so left alone the same process would win nearly every race.
 * Once this process lost such a race (others want the lock too), a process that took the lock
 * holds back its attempts until it has seen as many releases as there were other processes
 * listening when it last released (what PUBLISH counted): the others take their turn first. A
 * wrong count costs at most one short hold-back per release, never a missed handoff.
 */
export class TurnPolicy {
  /** A release notice was answered here, but another client took the lock first. */
  private contended = false;
  /** Release notices seen since this process last took the lock. */
  private releasesSinceWin = Infinity;
  /** Processes that received this process's last release notice of the lock (itself included). */
  private listeners = 1;

  /** A release notice arrived; true when this process should hold back its attempt. */
  noticed(): boolean {
    const holdBack = this.contended && this.releasesSinceWin < this.listeners - 1;
    this.releasesSinceWin++;
    return holdBack;
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
  }
}
