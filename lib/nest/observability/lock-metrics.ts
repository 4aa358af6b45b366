import type { Attributes, Counter, Histogram } from '@opentelemetry/api';
import { loadOtel } from './otel-api';

/** Name of the meter (instrumentation scope) the library records with. */
export const METER_NAME = 'nestjs-redis-lock';

/**
 * Lock metrics through `@opentelemetry/api`'s global MeterProvider (register the SDK before the
 * application is created): wait and hold time histograms, counters of busy locks (timeouts),
 * losses and renewal failures. Attributes name the key (`lock.key`) only with `exposeKeys`.
 * Without `@opentelemetry/api` installed, `create` returns undefined and nothing is recorded.
 */
export class LockMetrics {
  private constructor(
    private readonly waitTime: Histogram,
    private readonly holdTime: Histogram,
    private readonly timeouts: Counter,
    private readonly losses: Counter,
    private readonly renewalFailures: Counter,
    private readonly exposeKeys: boolean,
  ) {}

  /** The metrics on the global meter, or undefined when the OpenTelemetry API is absent. */
  static create(exposeKeys: boolean): LockMetrics | undefined {
    const otel = loadOtel();
    if (otel === undefined) return undefined;
    const meter = otel.metrics.getMeter(METER_NAME);
    return new LockMetrics(
      meter.createHistogram('redis_lock.wait.duration', {
        unit: 'ms',
        description: 'Time from asking for a lock to holding it.',
      }),
      meter.createHistogram('redis_lock.hold.duration', {
        unit: 'ms',
        description: 'Time a lock was held, from acquisition to release.',
      }),
      meter.createCounter('redis_lock.timeouts', {
        description: 'Lock calls that found the lock still busy after their wait.',
      }),
      meter.createCounter('redis_lock.lost', { description: 'Locks lost while held.' }),
      meter.createCounter('redis_lock.renewal.failures', {
        description: 'Failed lease renewals (renewal goes on).',
      }),
      exposeKeys,
    );
  }

  /** Records a wait that ended with the lock. */
  acquired(key: string, waitMs: number): void {
    this.waitTime.record(waitMs, this.attributes(key));
  }

  /** Counts a call that found the lock busy after its wait. */
  busy(key: string): void {
    this.timeouts.add(1, this.attributes(key));
  }

  /** Records a hold that ended with a release. */
  released(key: string, holdMs: number): void {
    this.holdTime.record(holdMs, this.attributes(key));
  }

  /** Counts a lock lost while held. */
  lost(key: string): void {
    this.losses.add(1, this.attributes(key));
  }

  /** Counts a failed renewal call. */
  renewalFailed(): void {
    this.renewalFailures.add(1);
  }

  private attributes(key: string): Attributes | undefined {
    return this.exposeKeys ? { 'lock.key': key } : undefined;
  }
}
