import { Subject, type Observable } from 'rxjs';
import type { LockObserver } from '../../core';
import type { LockLostError } from '../../errors';
import { LockMetrics } from './lock-metrics';

/**
 * What happened to a lock of this application, on `LockService.events$`. `key` is set only
 * with the module option `exposeKeys`. Re-entries of a held lock emit nothing.
 */
export type LockEvent =
  | { type: 'acquired'; key?: string; /** Time spent waiting, ms. */ waitMs: number }
  | { type: 'busy'; key?: string; /** Time spent waiting before giving up, ms. */ waitMs: number }
  | { type: 'released'; key?: string; /** Time the lock was held, ms. */ holdMs: number }
  | { type: 'lost'; key?: string; error: LockLostError }
  | { type: 'renewalFailed'; error: unknown };

/**
 * The engine's observer in the Nest layer: feeds `events$` (building an event only while
 * someone subscribes), `lockLost$` and the OpenTelemetry metrics.
 */
export class LockEvents implements LockObserver {
  private readonly events = new Subject<LockEvent>();
  private readonly losses = new Subject<LockLostError>();
  private readonly metrics: LockMetrics | undefined;

  constructor(private readonly exposeKeys: boolean) {
    this.metrics = LockMetrics.create(exposeKeys);
  }

  /** Every LockEvent. */
  get events$(): Observable<LockEvent> {
    return this.events.asObservable();
  }

  /** Every lost lock's error. */
  get lost$(): Observable<LockLostError> {
    return this.losses.asObservable();
  }

  acquired(key: string, waitMs: number): void {
    this.metrics?.acquired(key, waitMs);
    if (this.events.observed) this.events.next({ type: 'acquired', ...this.key(key), waitMs });
  }

  busy(key: string, waitMs: number): void {
    this.metrics?.busy(key);
    if (this.events.observed) this.events.next({ type: 'busy', ...this.key(key), waitMs });
  }

  released(key: string, holdMs: number): void {
    this.metrics?.released(key, holdMs);
    if (this.events.observed) this.events.next({ type: 'released', ...this.key(key), holdMs });
  }

  lost(error: LockLostError): void {
    this.metrics?.lost(error.key);
    this.losses.next(error);
    if (this.events.observed) this.events.next({ type: 'lost', ...this.key(error.key), error });
  }

  renewalFailed(error: unknown): void {
    this.metrics?.renewalFailed();
    if (this.events.observed) this.events.next({ type: 'renewalFailed', error });
  }

  /** Ends both streams (shutdown). */
  complete(): void {
    this.events.complete();
    this.losses.complete();
  }

  private key(key: string): { key?: string } {
    return this.exposeKeys ? { key } : {};
  }
}
