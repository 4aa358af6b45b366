import type { OptionTable } from './option-table';
import {
  completeLockOptions,
  resolveLockOptions,
  type CheckedRunOptions,
  type LockDefaults,
  type LockOptions,
  type ResolvedLockOptions,
} from './lock-options';

/**
 * Per-call options of one engine: validated, with its defaults filled in. A call without options
 * gets the same (never mutated) object every time, one object less per lock call; so does a
 * call with options checked ahead (a decorator's), without a signal.
 */
export class CallOptions {
  /** Resolved options of calls without options, by their default wait (run/acquire, try). */
  private readonly cached = new Map<number, ResolvedLockOptions>();
  /** Resolved options of options checked ahead, by the checked object. */
  private readonly completed = new WeakMap<CheckedRunOptions, ResolvedLockOptions>();

  constructor(private readonly defaults: LockDefaults) {}

  /** Validates `options` (against `table`, when given) and fills in the defaults. */
  resolve(
    options: LockOptions | undefined,
    waitTime = this.defaults.waitTime,
    table?: OptionTable,
  ): ResolvedLockOptions {
    if (options === undefined) {
      const cached = this.cached.get(waitTime);
      if (cached) return cached;
    }
    const { leaseTime, fencing, syncReplicas, maxHold } = this.defaults;
    const resolved = resolveLockOptions(
      options,
      { waitTime, leaseTime, fencing, syncReplicas, maxHold },
      table,
    );
    if (options === undefined && this.cached.size < 2) this.cached.set(waitTime, resolved);
    return resolved;
  }

  /**
   * Options checked ahead (checkLockOptions), filled in with the defaults: no check again. A
   * `signal` of the call's own replaces theirs.
   */
  complete(checked: CheckedRunOptions, signal?: AbortSignal): ResolvedLockOptions {
    let resolved = this.completed.get(checked);
    if (resolved === undefined) {
      resolved = completeLockOptions(checked, this.defaults);
      this.completed.set(checked, resolved);
    }
    return signal === undefined ? resolved : { ...resolved, signal };
  }
}
