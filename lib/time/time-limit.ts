import { now } from './clock';

/**
 * Longest delay a Node.js timer can hold, ms (2^31-1, about 24.8 days): the longest finite wait
 * or lease accepted; a longer timer is clamped or the deadline is checked when read.
 */
export const MAX_TIMER_DELAY = 2 ** 31 - 1;

/** What `within` resolves when the promise did not settle in time. */
export const TIMED_OUT = Symbol('timed out');

/**
 * Settles as `promise` does, or resolves TIMED_OUT after `ms` (an unref'd timer: waiting here
 * never keeps the process alive).
 */
export function within<T>(promise: Promise<T>, ms: number): Promise<T | typeof TIMED_OUT> {
  return new Promise<T | typeof TIMED_OUT>((resolve, reject) => {
    const timer = setTimeout(resolve, ms, TIMED_OUT);
    timer.unref();
    promise.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (error: unknown) => {
        clearTimeout(timer);
        reject(error);
      },
    );
  });
}

/** Waits at most `ms` for `promise`; true when it resolved in time, false when it rejected or took longer. */
export async function resolvesWithin(promise: Promise<unknown>, ms: number): Promise<boolean> {
  try {
    return (await within(promise, ms)) !== TIMED_OUT;
  } catch {
    return false;
  }
}

/** Resolves after `ms` (an unref'd timer). */
export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}

/**
 * An unref'd timer that never fires before its delay has passed on the monotonic clock (see
 * clock.ts). Node counts timers from the event loop's cached time, which lags under load, so a
 * plain timer can fire a few ms early: too early for a retry meant to arrive once a lease that
 * Redis measured has ended. A delay beyond what a Node timer holds is capped.
 */
export class DeadlineTimer {
  private timer: NodeJS.Timeout | undefined;
  private at = 0;

  constructor(private readonly fn: () => void) {}

  /** Runs the function once `delay` ms have passed (instead of when it was due before). */
  start(delay: number): void {
    clearTimeout(this.timer);
    const wait = Math.min(delay, MAX_TIMER_DELAY);
    this.at = now() + wait;
    this.arm(wait);
  }

  /** Stops a pending run. */
  cancel(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  private arm(delay: number): void {
    this.timer = setTimeout(() => {
      const left = this.at - now();
      if (left > 0) this.arm(left);
      else {
        this.timer = undefined;
        this.fn();
      }
    }, delay);
    this.timer.unref();
  }
}
