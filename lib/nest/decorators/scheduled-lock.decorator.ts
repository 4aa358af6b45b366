import {
  checkLockOptions,
  checkOptions,
  describe,
  LOCK_OPTIONS,
  lockName,
  RUN_OPTIONS,
  type OptionTableOf,
} from '../../core';
import { LockKeyError, LockOptionsError } from '../../errors';
import { className, engineOf, lockingDecorator } from './locked.decorator';

/** Options of `@ScheduledLock`. */
export interface ScheduledLockOptions {
  /**
   * The job's lock key, as given (no templates: a scheduled method gets no arguments). Default
   * `job:<Class>.<method>`.
   */
  key?: string;
  /**
   * Keep the lock at least this long (ms) after a run took it, however early the run ends, so an
   * instance whose tick fires up to this late (clock skew, slow start, GC) finds it busy and
   * skips. Shorter than the schedule's period. Default 0.
   */
  holdAtLeast?: number;
  /**
   * Stop renewing a run's lock once it is older than this (ms): a run stuck on a promise that
   * never settles is told (`LockLostError`) when the lease then runs out, and the next tick
   * runs elsewhere. Default: the module's `maxHold` (Infinity).
   */
  maxHold?: number;
  /** An explicit lease instead of the watchdog's (no `maxHold` then), ms. */
  leaseTime?: number;
}

// `any`: the method's own parameters, whatever they are (a scheduled method is called without).
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type ScheduledMethod = (...args: any[]) => unknown;

/** A method decorator for scheduled methods (sync or async). */
export type ScheduledLockDecorator = <M extends ScheduledMethod>(
  target: object,
  propertyKey: string | symbol,
  descriptor: TypedPropertyDescriptor<M>,
) => TypedPropertyDescriptor<M>;

/** The option table of `@ScheduledLock`: the key, and the lock's hold times and lease. */
const SCHEDULED_LOCK_OPTIONS = {
  key: {
    check: (value: unknown, option: string): string => {
      if (typeof value !== 'string') {
        throw new LockOptionsError(option, `expected a string, got ${describe(value)}.`);
      }
      return value;
    },
  },
  holdAtLeast: LOCK_OPTIONS.holdAtLeast,
  maxHold: LOCK_OPTIONS.maxHold,
  leaseTime: LOCK_OPTIONS.leaseTime,
} as const satisfies OptionTableOf<ScheduledLockOptions>;

/**
 * Runs a scheduled method (under `@Cron`, `@Interval` or `@Timeout` of `@nestjs/schedule`) on
 * one instance per tick: the instance that takes the job's lock runs it, the others skip the
 * tick at once (`waitTime: 0`, `onBusy: 'skip'`; logged at debug level). With `holdAtLeast`
 * the lock outlives a short run, so a tick that fires late elsewhere is skipped too.
 *
 * @example @Cron('0 * * * * *') @ScheduledLock({ holdAtLeast: 10_000 })
 * @example @Interval(5_000) @ScheduledLock({ key: 'job:reindex', maxHold: 60_000 })
 */
export function ScheduledLock(options: ScheduledLockOptions = {}): ScheduledLockDecorator {
  if (typeof options !== 'object' || options === null) {
    throw new LockOptionsError('options', `expected an object, got ${describe(options)}.`);
  }
  const { key, ...lockOptions } = checkOptions(SCHEDULED_LOCK_OPTIONS, options);
  const runOptions = Object.freeze(
    checkLockOptions({ ...lockOptions, waitTime: 0, onBusy: 'skip' }, RUN_OPTIONS),
  );
  const decorator = lockingDecorator('@ScheduledLock', (decorated) => {
    const jobKey = key ?? `job:${className(decorated.target)}.${String(decorated.propertyKey)}`;
    try {
      lockName('', jobKey);
    } catch (error) {
      if (!(error instanceof LockKeyError)) throw error;
      throw new LockOptionsError('key', `${decorated.where}: ${error.message}`);
    }
    return () => (locks, body, signal) => {
      const engine = engineOf(locks);
      if (engine !== undefined) return engine.runChecked(jobKey, body, runOptions, signal);
      return locks.run(jobKey, body, signal ? { ...runOptions, signal } : runOptions);
    };
  });
  return decorator as ScheduledLockDecorator;
}
