import type { Busy } from './busy';
import type { LockHold } from './lock-hold';
import type { LockTracer, TracedKind, WaitTrace } from './lock-tracer';
import { kindOf } from './kinds';
import type { LockTarget } from '../store';

/**
 * Starts the trace of an outermost acquisition of `target` (called in the caller's call chain,
 * where the wait starts).
 */
export function startTrace(tracer: LockTracer, target: LockTarget, waitTime: number): WaitTrace {
  const kind: TracedKind = target.kind === 'lock' ? 'plain' : target.kind;
  return tracer.waiting({ key: target.key, kind, mode: kindOf(target.kind).mode, waitTime });
}

/**
 * Runs the wait `start` begins in `trace`'s context and tells the trace how it ended: the hold
 * `holdOf` finds in the result gets the trace of its hold, a result without one is busy, a
 * rejection (or a throw) failed. `busy.attempts` counts the wait's attempts. The result is
 * `start`'s, unchanged.
 */
export function traceWait<E>(
  trace: WaitTrace,
  busy: Busy,
  start: () => Promise<E>,
  holdOf: (entered: E) => LockHold | undefined,
): Promise<E> {
  let taken: Promise<E>;
  try {
    taken = trace.run(start);
  } catch (error) {
    taken = Promise.reject(error);
  }
  return taken.then(
    (entered) => {
      const hold = holdOf(entered);
      if (hold === undefined) trace.busy(busy.attempts ?? 0);
      else hold.trace = trace.acquired(busy.attempts ?? 0);
      return entered;
    },
    (error: unknown) => {
      trace.failed(error, busy.attempts ?? 0);
      throw error;
    },
  );
}
