/** What AbortSignal's own accessors answer for `signal`, whose instance shadows them. */
const original = (signal: AbortSignal, property: 'aborted' | 'reason'): unknown =>
  Reflect.get(AbortSignal.prototype, property, signal);

/**
 * Makes every read of `signal` (`aborted`, `reason`, `throwIfAborted()`) call `check` first, so
 * `check` can abort it on the spot. A hold's signal is aborted by timers, and after a stalled
 * event loop the caller's code resumes (promise callbacks, I/O) before any timer runs: with the
 * check, the first read after a lease deadline passed already sees the signal aborted. Event
 * listeners still run when a timer finds the loss. Returns `signal`.
 */
export function checkedOnRead(signal: AbortSignal, check: () => void): AbortSignal {
  Object.defineProperties(signal, {
    aborted: {
      get(this: AbortSignal) {
        check();
        return original(this, 'aborted') as boolean;
      },
    },
    reason: {
      get(this: AbortSignal): unknown {
        check();
        return original(this, 'reason');
      },
    },
    throwIfAborted: {
      value(this: AbortSignal) {
        check();
        AbortSignal.prototype.throwIfAborted.call(this);
      },
    },
  });
  return signal;
}
