import { resolveLockOptions, type LockOptions, type ResolvedLockOptions } from './lock-options';

/** The engine-wide defaults that per-call options fill in. */
export interface CallDefaults {
  waitTime: number;
  leaseTime: number;
  fencing: boolean;
  syncReplicas: number;
}

/**
 * Per-call options of one engine: validated, with its defaults filled in. A call without options
 * gets the same (never mutated) object every time, one object less per lock call.
 */
export class CallOptions {
  /** Resolved options of calls without options, by their default wait (run/acquire, try). */
  private readonly cached = new Map<number, ResolvedLockOptions>();

  constructor(private readonly defaults: CallDefaults) {}

  /** Validates `options` (names in `known`, when given) and fills in the defaults. */
  resolve(
    options: LockOptions | undefined,
    waitTime = this.defaults.waitTime,
    known?: readonly string[],
  ): ResolvedLockOptions {
    if (options === undefined) {
      const cached = this.cached.get(waitTime);
      if (cached) return cached;
    }
    const { leaseTime, fencing, syncReplicas } = this.defaults;
    const resolved = resolveLockOptions(
      options,
      { waitTime, leaseTime, fencing, syncReplicas },
      known,
    );
    if (options === undefined && this.cached.size < 2) this.cached.set(waitTime, resolved);
    return resolved;
  }
}
