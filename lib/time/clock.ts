import { performance } from 'node:perf_hooks';

/**
 * Milliseconds on a monotonic clock: leases and deadlines are measured with it, so a step of
 * the wall clock (NTP, a VM resumed, an operator) neither reports a healthy lock lost nor hides
 * a lost one.
 */
export function now(): number {
  return performance.now();
}
