import { UNLOCK_LATCH_TTL } from '../../store';
import { now } from '../../time/clock';

/**
 * The memory store's unlock latches: the answer of each release, kept UNLOCK_LATCH_TTL ms so a
 * release sent again gets the first answer. Expiry walks a queue in setting order (which is also
 * expiry order) from a moving head, so each latch costs O(1) however many releases a test runs.
 */
export class UnlockLatches {
  private readonly answers = new Map<string, number | null>();
  /** Keys with their expiry, in setting order; entries before `head` are gone. */
  private queue: { key: string; expiresAt: number }[] = [];
  private head = 0;

  /** The answer kept for `key`; undefined when none (never set, or expired). */
  get(key: string): number | null | undefined {
    this.dropExpired();
    return this.answers.get(key);
  }

  /** Keeps `answer` for `key` for UNLOCK_LATCH_TTL ms. */
  set(key: string, answer: number | null): void {
    this.dropExpired();
    this.answers.set(key, answer);
    this.queue.push({ key, expiresAt: now() + UNLOCK_LATCH_TTL });
  }

  private dropExpired(): void {
    const time = now();
    while (this.head < this.queue.length && this.queue[this.head].expiresAt <= time) {
      this.answers.delete(this.queue[this.head].key);
      this.head++;
    }
    // Compact once the gone entries are the larger half (amortised O(1) per latch).
    if (this.head > 1024 && this.head * 2 > this.queue.length) {
      this.queue = this.queue.slice(this.head);
      this.head = 0;
    }
  }
}
