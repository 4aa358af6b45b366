import { LockError } from '../errors';
import type { Busy } from './busy';
import { busyError } from './busy';
import type { HoldTimes } from './hold-times';
import type { PermitHandle } from './lock-handle';
import {
  PERMIT_OPTIONS,
  PERMIT_RUN_OPTIONS,
  type LockOptions,
  type ResolvedLockOptions,
  type RunOptions,
} from './options/lock-options';
import type { CallOptions } from './options/call-options';
import { describe } from './options/validate';
import { requirePort, type LockStore, type LockTarget } from '../store';

/** What a semaphore needs of the lock engine. */
export interface PermitEngine {
  /** Per-call options with the engine's defaults filled in. */
  readonly options: CallOptions;
  enter(target: LockTarget, opts: ResolvedLockOptions): Promise<PermitHandle | Busy>;
  runOn<T>(
    target: LockTarget,
    fn: (permit: PermitHandle) => T | Promise<T>,
    opts: ResolvedLockOptions,
    policies: RunOptions | undefined,
  ): Promise<T | undefined>;
  forceUnlockTarget(target: LockTarget): Promise<boolean>;
  /** Recent hold times, for a busy caller's retryAfter. */
  readonly holdTimes: HoldTimes;
}

/** Options of a permit's acquire, tryAcquire and run: a lock's, without mode, fair, fencing. */
export type PermitOptions = Omit<LockOptions, 'mode' | 'fair' | 'fencing' | 'holdAtLeast'>;
/** Options of `RedisSemaphore.run` and `@Semaphore`. */
export type PermitRunOptions = Omit<RunOptions, 'mode' | 'fair' | 'fencing' | 'holdAtLeast'>;

/**
 * A semaphore of leased permits (Redisson's RPermitExpirableSemaphore): at most `permits`
 * holders at once across every process. Permits are renewed by the watchdog while held, so a
 * crashed holder's permit comes back one lease later; a chain that holds a permit re-enters it.
 */
export class RedisSemaphore {
  constructor(
    private readonly engine: PermitEngine,
    private readonly store: LockStore,
    /** The semaphore's target: its key, name and limit. */
    private readonly target: LockTarget,
  ) {}

  /** The semaphore's key, as given. */
  get key(): string {
    return this.target.key;
  }

  /** How many permits this semaphore allows at once (the limit this caller uses). */
  get permits(): number {
    return this.target.permits!;
  }

  /** Takes a permit, waiting up to `waitTime`; throws LockAcquireTimeoutError after that. */
  async acquire(options?: PermitOptions): Promise<PermitHandle> {
    const opts = this.engine.options.resolve(options, undefined, PERMIT_OPTIONS);
    const entry = await this.engine.enter(this.target, opts);
    if (isBusy(entry)) {
      const typicalHold = this.engine.holdTimes.typical(this.target.key);
      throw busyError(this.target.key, opts.waitTime, entry, false, typicalHold);
    }
    return entry;
  }

  /** Takes a permit if one is free (or within `waitTime` if given); null when none is. */
  async tryAcquire(options?: PermitOptions): Promise<PermitHandle | null> {
    const opts = this.engine.options.resolve(options, 0, PERMIT_OPTIONS);
    const entry = await this.engine.enter(this.target, opts);
    return isBusy(entry) ? null : entry;
  }

  /**
   * Takes a permit, runs `fn` holding it (nested calls guarded by this semaphore reuse it),
   * returns the permit in `finally` and returns `fn`'s result (`undefined` when none was free
   * after the wait with `onBusy: 'skip'`).
   */
  run<T>(
    fn: (permit: PermitHandle) => T | Promise<T>,
    options?: PermitRunOptions,
  ): Promise<T | undefined> {
    if (typeof fn !== 'function') {
      throw new LockError(`run() needs the function to run holding a permit, got ${describe(fn)}.`);
    }
    const opts = this.engine.options.resolve(options, undefined, PERMIT_RUN_OPTIONS);
    return this.engine.runOn(this.target, fn, opts, options);
  }

  /** How many more permits could be taken now (expired ones count as free). */
  available(): Promise<number> {
    try {
      return requirePort(this.store, 'permitCount').available(this.target);
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /** Revokes every permit, whoever holds it, and wakes the waiters; true when one was held. */
  forceUnlock(): Promise<boolean> {
    return this.engine.forceUnlockTarget(this.target);
  }
}

function isBusy(entry: object): entry is Busy {
  return 'leaseEnds' in entry;
}
