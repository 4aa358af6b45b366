import { messageOf, type LockError, type LockLostError } from '../errors';
import { Acquirer } from './acquirer';
import { GroupAcquirer } from './group-acquirer';
import { HoldCalls } from './hold-calls';
import { keepFor, KeptReleases } from './kept-release';
import type { LockHold } from './lock-hold';
import { LockHolds } from './lock-holds';
import type { LockEngineConfig } from './lock-engine-config';
import type { LockObserver } from './lock-observer';
import type { OwnerContext } from './ownership/owner-context';
import { LockWaiters } from './waiting/lock-waiters';

/** What the parts need from the engine that owns them. */
export interface EngineHooks {
  /** Tells of a lost hold (logged and observed, outside every call chain). */
  readonly report: (error: LockLostError) => void;
  /** The error new acquires get once the engine is closing. */
  readonly closing: () => LockError | undefined;
  /** Runs `fn` outside every call chain. */
  readonly outside: <T>(fn: () => T) => T;
}

/** A LockEngine's working parts, wired to each other. */
export interface EngineParts {
  readonly holds: LockHolds;
  readonly waiters: LockWaiters;
  readonly calls: HoldCalls;
  readonly acquirer: Acquirer;
  readonly groups: GroupAcquirer;
  /** Releases of holds with `holdAtLeast` (and the check of a call that asks for it). */
  readonly kept: KeptReleases;
  /** Given to every entry the engine issues: frees its hold, and marks the entry as its. */
  readonly releaseHold: (hold: LockHold) => Promise<void>;
}

/** Builds the parts of an engine on `config.store`; `observer` also records hold times. */
export function engineParts(
  config: LockEngineConfig,
  context: OwnerContext,
  observer: LockObserver,
  hooks: EngineHooks,
): EngineParts {
  const holds = new LockHolds(config.store, config.leaseTime, {
    lost: (error) => hooks.report(error),
    renewalFailed: (error) => {
      config.logger.warn(`Lock renewal failed, will retry: ${messageOf(error)}`);
      config.observer?.renewalFailed(error);
    },
    outside: hooks.outside,
  });
  const waiters = new LockWaiters(config.store, config.leaseTime, {
    abandoned: (hold) => void calls.drop(hold),
    failed: (error) => config.logger.warn(`Lock notice subscription failed: ${messageOf(error)}`),
  });
  const calls = new HoldCalls(config.store, holds, waiters, {
    logger: config.logger,
    observer,
    closing: hooks.closing,
    report: (error) => hooks.report(error),
  });
  const kept = new KeptReleases(config.store, holds, {
    logger: config.logger,
    observer,
    report: (error) => hooks.report(error),
  });
  const releaseHold = (hold: LockHold): Promise<void> => {
    const keep = keepFor(hold);
    return keep > 0 ? kept.release(hold, keep) : calls.release(hold);
  };
  const acquirer = new Acquirer({
    store: config.store,
    context,
    calls,
    waiters,
    observer,
    tracer: config.tracer,
    fairQueueTimeout: config.fairQueueTimeout,
    noLeaseRetry: config.leaseTime,
    releaseHold,
    closing: hooks.closing,
    outside: hooks.outside,
  });
  const groups = new GroupAcquirer(acquirer);
  return { holds, waiters, calls, acquirer, groups, kept, releaseHold };
}
