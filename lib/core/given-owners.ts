/**
 * The owner ids that attempts were given by their callers (a fair waiter keeps one for all its
 * attempts, a downgrade uses its write hold's), while attempts of each are in flight. The store
 * grants an owner id once: a later attempt of the id holds what an earlier one was granted, so an
 * earlier attempt that timed out must not free it once a newer one was sent.
 */
export class GivenOwners {
  private readonly owners = new Map<string, { newest: number; inFlight: number }>();
  private seq = 0;

  /** An attempt of `owner` is sent: its number (a newer attempt has a larger one). */
  sent(owner: string): number {
    const seq = ++this.seq;
    const record = this.owners.get(owner);
    if (record) {
      record.newest = seq;
      record.inFlight++;
    } else this.owners.set(owner, { newest: seq, inFlight: 1 });
    return seq;
  }

  /** An attempt of `owner` settled; the id is forgotten once none of its attempts is in flight. */
  settled(owner: string): void {
    const record = this.owners.get(owner);
    if (record && --record.inFlight === 0) this.owners.delete(owner);
  }

  /** Whether an attempt of `owner` newer than attempt `seq` was sent since (and is in flight). */
  superseded(owner: string, seq: number): boolean {
    return (this.owners.get(owner)?.newest ?? 0) > seq;
  }

  /** How many owner ids have attempts in flight. */
  get size(): number {
    return this.owners.size;
  }
}
