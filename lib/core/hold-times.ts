import type { LockObserver } from './lock-observer';

/** How much a new hold time weighs in the moving average (the last ~10 holds count most). */
const WEIGHT = 0.2;
/** Names whose averages are kept; the least recently released beyond it are forgotten. */
const MAX_NAMES = 1_000;

/**
 * Recent hold times in this process: an exponential moving average per lock key and one over
 * all keys, fed by every outermost release. A busy caller's `retryAfter` is based on them (see
 * busyError): in-process arithmetic only, no Redis call.
 */
export class HoldTimes {
  private readonly byKey = new Map<string, number>();
  private overall: number | undefined;

  /** A hold of `key` lasted `holdMs`. */
  record(key: string, holdMs: number): void {
    const before = this.byKey.get(key);
    if (before !== undefined)
      this.byKey.delete(key); // re-inserted last: least recently used first
    else if (this.byKey.size >= MAX_NAMES) this.byKey.delete(this.byKey.keys().next().value!);
    this.byKey.set(key, average(before, holdMs));
    this.overall = average(this.overall, holdMs);
  }

  /** The typical hold time of `key` in ms: its own average, else that of every key; undefined before any release. */
  typical(key: string): number | undefined {
    return this.byKey.get(key) ?? this.overall;
  }

  /** `observer` (if any), with every release also recorded here. */
  observing(observer: LockObserver | undefined): LockObserver {
    const noop = () => undefined;
    return {
      acquired: observer ? (key, waitMs) => observer.acquired(key, waitMs) : noop,
      busy: observer ? (key, waitMs) => observer.busy(key, waitMs) : noop,
      released: (key, holdMs) => {
        this.record(key, holdMs);
        observer?.released(key, holdMs);
      },
      lost: observer ? (error) => observer.lost(error) : noop,
      renewalFailed: observer ? (error) => observer.renewalFailed(error) : noop,
    };
  }
}

function average(before: number | undefined, sample: number): number {
  return before === undefined ? sample : before + WEIGHT * (sample - before);
}
