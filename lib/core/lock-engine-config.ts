import type { LockObserver } from './lock-observer';
import type { LockLostPolicy } from './options/lock-options';
import type { LockStore } from '../store';

/** Where the engine reports what its caller cannot see. */
export interface LockEngineLogger {
  warn(message: string): void;
  debug(message: string): void;
}

/** Settings of a LockEngine (validated by the caller). */
export interface LockEngineConfig {
  store: LockStore;
  keyPrefix: string;
  /** Watchdog lease in ms. */
  leaseTime: number;
  /** Default wait in ms for acquire/run. */
  waitTime: number;
  /** Issue fencing tokens unless a call says otherwise. */
  fencing: boolean;
  /** Replicas that must acknowledge a grant unless a call says otherwise (0: none). */
  syncReplicas: number;
  /** Default policy of run() for a lost lock. */
  onLockLost: LockLostPolicy;
  /** How long a fair lock's waiter keeps its place past its turn without coming back, ms. */
  fairQueueTimeout: number;
  logger: LockEngineLogger;
  /** Told about acquisitions, busy locks, releases, losses and renewal failures. */
  observer?: LockObserver;
}
