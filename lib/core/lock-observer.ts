import type { LockLostError } from '../errors';

/**
 * Told what happens to locks, for events and metrics; called with plain values on the hot path
 * (outermost acquisitions and releases only, not re-entries).
 */
export interface LockObserver {
  /** A lock was taken after `waitMs`. */
  acquired(key: string, waitMs: number): void;
  /** A lock was still busy after `waitMs` (a timeout, a skip or a failed tryAcquire). */
  busy(key: string, waitMs: number): void;
  /** A lock held `holdMs` was released. */
  released(key: string, holdMs: number): void;
  /** A lock was lost while held. */
  lost(error: LockLostError): void;
  /** A renewal call failed (renewal goes on). */
  renewalFailed(error: unknown): void;
}
