import type { LockObserver } from './lock-observer';
import type { LockTracer } from './lock-tracer';
import type { ResolvedEngineOptions } from './options/engine-options';
import type { LockStore } from '../store';

/** Where the engine reports what its caller cannot see. */
export interface LockEngineLogger {
  warn(message: string): void;
  debug(message: string): void;
}

/**
 * Settings of a LockEngine: the engine-wide options (ENGINE_OPTIONS, checked by the caller),
 * the store and where to report.
 */
export interface LockEngineConfig extends ResolvedEngineOptions {
  store: LockStore;
  logger: LockEngineLogger;
  /** Told about acquisitions, busy locks, releases, losses and renewal failures. */
  observer?: LockObserver;
  /** Follows each outermost acquisition and its hold (e.g. as spans); none by default. */
  tracer?: LockTracer;
}
