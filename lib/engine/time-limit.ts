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
