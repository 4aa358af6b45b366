import { LockError, LockKeyError } from '../../errors';
import type { LockTarget } from '../../store';
import type { LockEngineConfig } from '../lock-engine-config';
import type { LockHandle } from '../lock-handle';
import type { ResolvedLockOptions } from '../options/lock-options';
import { describe } from '../options/validate';
import type { Busy } from '../busy';
import type { GroupHandle } from '../ownership/group-handle';
import { LockEntry } from '../ownership/lock-entry';
import type { CampaignDriver } from './leader-campaign';
import { checkLeaderOptions, LEADER_OPTIONS, type LeaderOptions } from './leader-options';

/** What the driver uses of the engine. */
export interface CampaignEngine {
  readonly config: LockEngineConfig;
  /** The target of a plain lock `key` (LockKeyError for a bad key). */
  target(key: string): LockTarget;
  /** Takes `target` as `opts` say. */
  enter(target: LockTarget, opts: ResolvedLockOptions): Promise<LockEntry | GroupHandle | Busy>;
  /** Whether the engine is shutting down. */
  stopped(): boolean;
  /** Runs `fn` outside every call chain. */
  outside<T>(fn: () => T): T;
}

/**
 * The driver of a campaign for `key` on `engine`: the leader lock is a plain lock (Redisson's
 * RLock layout; with `fencing`, RFencedLock's token), waited for without a time limit, renewed by
 * the watchdog of the campaign's lease. Checks `key` and `options` here (LockKeyError,
 * LockOptionsError).
 */
export function campaignDriver(
  engine: CampaignEngine,
  key: string,
  options: LeaderOptions | undefined,
): CampaignDriver {
  if (typeof key !== 'string') {
    throw new LockKeyError(`A leader name must be a string, got ${describe(key)}.`);
  }
  const checked = checkLeaderOptions(options);
  const target = engine.target(key);
  const { config } = engine;
  const leaseTime = checked.leaseTime ?? config.leaseTime;
  const opts: ResolvedLockOptions = {
    waitTime: Infinity,
    leaseTime,
    watchdog: true,
    signal: undefined,
    fencing: checked.fencing ?? LEADER_OPTIONS.fencing.default,
    syncReplicas: config.syncReplicas,
    mode: undefined,
    fair: false,
    holdAtLeast: 0,
    // A term lasts as long as the leader lives: the module's maxHold caps jobs, not terms.
    maxHold: Infinity,
  };
  return {
    key,
    leaseTime,
    logger: config.logger,
    stopped: () => engine.stopped(),
    outside: (fn) => engine.outside(fn),
    async take(signal: AbortSignal): Promise<LockHandle> {
      const entry = await engine.enter(target, { ...opts, signal });
      if (!(entry instanceof LockEntry)) {
        throw new LockError(`The leader lock "${key}" was not granted.`);
      }
      return entry;
    },
    end(held: LockHandle, reason: string): void {
      (held as LockEntry).hold.lose(reason);
    },
  };
}
