/**
 * Counts the calls inside a section of code now and the most seen at once: the sample app's
 * witness of what its locks allow (readers together, one writer alone, N exports at most).
 * In-process only; the demo runs one instance, so it sees every holder.
 */
export class Overlap {
  private active = 0;
  private peak = 0;

  /** Calls inside now. */
  get now(): number {
    return this.active;
  }

  /** The most calls that were ever inside at once. */
  get max(): number {
    return this.peak;
  }

  async run<T>(fn: () => Promise<T>): Promise<T> {
    this.active++;
    this.peak = Math.max(this.peak, this.active);
    try {
      return await fn();
    } finally {
      this.active--;
    }
  }
}

/** One Overlap per key (an account id, a wallet id), created on first use. */
export class Overlaps {
  private readonly byKey = new Map<string | number, Overlap>();

  of(key: string | number): Overlap {
    let overlap = this.byKey.get(key);
    if (!overlap) this.byKey.set(key, (overlap = new Overlap()));
    return overlap;
  }
}
