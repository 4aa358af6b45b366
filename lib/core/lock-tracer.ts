import type { LockLostError } from '../errors';
import type { LockMode } from './options/lock-options';

/** What a lock call asks for, as a trace names it: `plain` is a plain lock (not fair). */
export type TracedKind = 'plain' | 'fair' | 'read' | 'write' | 'multi' | 'permit';

/** The wait a trace follows, as LockTracer.waiting gets it. */
export interface TracedWait {
  /** The key as the caller gave it (a multi-lock's keys joined with ', '). */
  readonly key: string;
  readonly kind: TracedKind;
  /** A read-write lock's mode; undefined for other kinds. */
  readonly mode: LockMode | undefined;
  /** How long the call may wait, ms (0: a try; Infinity: forever). */
  readonly waitTime: number;
}

/**
 * Follows lock calls from start to end, e.g. as spans: told when an outermost acquisition starts
 * to wait (re-entries are not traced), how the wait ended, and how the hold it got ended. Unlike
 * LockObserver, it is called per call and in the caller's call chain when the wait starts, so a
 * trace can keep the caller's context (its parent span). The engine calls nothing when it has
 * no tracer.
 */
export interface LockTracer {
  /** An outermost acquisition starts waiting, in the caller's call chain: its trace. */
  waiting(wait: TracedWait): WaitTrace;
}

/** The trace of one wait; exactly one of `acquired`, `busy` and `failed` ends it. */
export interface WaitTrace {
  /** Runs `fn` (the wait's store calls) in the trace's context. */
  run<T>(fn: () => T): T;
  /**
   * The lock was taken after `attempts` store attempts: the trace of the hold it begins
   * (ended by HoldTrace.released or HoldTrace.lost).
   */
  acquired(attempts: number): HoldTrace;
  /** The lock was still busy when the wait ended (a failed try, or a timeout). */
  busy(attempts: number): void;
  /** The call failed while waiting (the store unreachable, an abort, shutdown). */
  failed(error: unknown, attempts: number): void;
}

/** The trace of one hold: ended by its release or by its loss, whichever comes first. */
export interface HoldTrace {
  /**
   * The hold was released; `failure`: the release failed or got no answer (the lock then
   * expires on its own). No effect once ended.
   */
  released(failure?: unknown): void;
  /** The hold was lost (found at its release, or while held). No effect once ended. */
  lost(error: LockLostError): void;
}
