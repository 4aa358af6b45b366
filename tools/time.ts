/**
 * Waiting, for the tests, the benchmark and the Redis spawners: a plain sleep and a polled
 * condition on a monotonic clock (unaffected by a mocked or stepped `Date.now`).
 */
import { performance } from 'node:perf_hooks';

/** Resolves after `ms` milliseconds. */
export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** How until() polls and what its timeout error says. */
export interface UntilOptions {
  /** Poll period, ms (default 5); 0: after each turn of the event loop (setImmediate). */
  every?: number;
  /** What is awaited, named in the timeout error (default "condition"). */
  what?: string;
  /**
   * Treat a predicate that throws as not yet met (a node still starting or just killed) and
   * name its last error on timeout; by default the error rejects at once.
   */
  retryErrors?: boolean;
}

/** Resolves once `predicate` holds (polled every 5 ms unless told); rejects after `timeout` ms. */
export async function until(
  predicate: () => boolean | Promise<boolean>,
  timeout = 5_000,
  { every = 5, what = 'condition', retryErrors = false }: UntilOptions = {},
): Promise<void> {
  const deadline = performance.now() + timeout;
  let lastError: unknown;
  for (;;) {
    try {
      if (await predicate()) return;
    } catch (error) {
      if (!retryErrors) throw error;
      lastError = error;
    }
    if (performance.now() > deadline) {
      const cause = lastError instanceof Error ? ` (last error: ${lastError.message})` : '';
      throw new Error(`${what} not met within ${timeout} ms${cause}`);
    }
    await (every === 0 ? new Promise((resolve) => setImmediate(resolve)) : sleep(every));
  }
}
