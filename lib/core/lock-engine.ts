import { AsyncResource } from 'node:async_hooks';
import { LockError, LockLostError } from '../errors';
import { engineParts, type EngineParts } from './engine-parts';
import { finishHolds } from './engine-shutdown';
import { runHeld } from './run-held';
import type { LockHandle } from './lock-handle';
import {
  RUN_OPTIONS,
  type CheckedRunOptions,
  type LockLostPolicy,
  type LockOptions,
  type ResolvedLockOptions,
  type RunOptions,
} from './options/lock-options';
import { CallOptions } from './options/call-options';
import { applyLostPolicy } from './options/lost-policy';
import { describe } from './options/validate';
import { RedisSemaphore } from './semaphore';
import { campaignDriver } from './leadership/campaign-driver';
import { LeaderCampaign } from './leadership/leader-campaign';
import type { LeaderOptions } from './leadership/leader-options';
import { GroupHandle, isHandle } from './ownership/group-handle';
import { ChainHandles } from './ownership/chain-handles';
import { LockEntry } from './ownership/lock-entry';
import { OwnerContext } from './ownership/owner-context';
import type { LockTarget } from '../store';
import { busyError, lookUpHolder, type Busy } from './busy';
import { HoldTimes } from './hold-times';
import type { LockEngineConfig } from './lock-engine-config';
import { kindOf, lockKind } from './kinds';
import {
  callTarget,
  checkedPermitTarget,
  permitTarget,
  type LockKeys,
  type LockMode,
} from './targets';

/**
 * The lock engine: reentrant locks owned by async call chains, kept alive by a watchdog,
 * waited for by release notice, on any LockStore. It knows nothing of Nest or of Redis.
 */
export class LockEngine {
  private readonly context = new OwnerContext();
  /** The handles each scope (request) took with acquire(), to refuse waiting for them. */
  private readonly handles = new ChainHandles(this.context);
  /** Holds and watchdog, waiters, store calls, acquirers (see engineParts). */
  private readonly parts: EngineParts;
  /** Per-call options with the engine's defaults filled in (also the semaphores'). */
  readonly options: CallOptions;
  private closing: LockError | undefined;
  private closed: Promise<void> | undefined;
  private readonly outside: <T>(fn: () => T) => T;
  /** Recent hold times, for a busy caller's retryAfter. */
  readonly holdTimes = new HoldTimes();

  constructor(private readonly config: LockEngineConfig) {
    this.options = new CallOptions(config);
    // Outside every chain: the engine's owner context and any other AsyncLocalStorage (request ids, spans).
    const root = new AsyncResource('LockEngine');
    this.outside = <T>(fn: () => T): T => root.runInAsyncScope(() => this.context.exit(fn));
    this.parts = engineParts(config, this.context, this.holdTimes.observing(config.observer), {
      report: (error) => this.report(error),
      closing: () => this.closing,
      outside: this.outside,
    });
  }

  /** This engine's client id: the uuid before the `:` of every owner id it writes. */
  get clientId(): string {
    return this.parts.calls.clientId;
  }

  /** How many locks this process holds now. */
  get heldCount(): number {
    return this.parts.holds.size;
  }

  /**
   * Takes the lock (a multi-lock: all its keys), waiting up to `waitTime`; throws
   * LockAcquireTimeoutError after that.
   */
  async acquire(keys: LockKeys, options?: LockOptions): Promise<LockHandle> {
    const scope = this.handles.scope();
    const opts = this.options.resolve(options, this.config.waitTime);
    const target = this.target(keys, opts);
    const refused = this.handles.refuse(target); // undefined on the hot path: no await
    if (refused) await refused;
    const entry = await this.enter(target, opts);
    if (!isHandle(entry)) throw await this.busyError(target, opts, entry);
    ChainHandles.add(scope, entry);
    return entry;
  }

  /** Takes the lock if it is free (or within `waitTime` if given); null when busy. */
  async tryAcquire(keys: LockKeys, options?: LockOptions): Promise<LockHandle | null> {
    const scope = this.handles.scope();
    const opts = this.options.resolve(options, 0);
    const target = this.target(keys, opts);
    const refused = opts.waitTime > 0 ? this.handles.refuse(target) : undefined;
    if (refused) await refused;
    const entry = await this.enter(target, opts);
    if (!isHandle(entry)) return null;
    ChainHandles.add(scope, entry);
    return entry;
  }

  /**
   * Takes the lock, runs `fn` as its owner (nested locked calls re-enter), releases in
   * `finally` and returns `fn`'s result (`undefined` when busy with `onBusy: 'skip'`).
   */
  run<T>(
    keys: LockKeys,
    fn: (lock: LockHandle) => T | Promise<T>,
    options?: RunOptions,
  ): Promise<T | undefined> {
    // Not async (one promise less per call); bad arguments still reject, as from an async function.
    try {
      if (typeof fn !== 'function') {
        throw new LockError(
          `run() needs the function to run under the lock as its second argument, got ${describe(fn)}.`,
        );
      }
      const opts = this.options.resolve(options, this.config.waitTime, RUN_OPTIONS);
      return this.runOn(this.target(keys, opts), fn, opts, options);
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /**
   * run() with options checked ahead (checkLockOptions against RUN_OPTIONS, as a decorator does
   * when it decorates): they are only filled in with this engine's defaults. With `permits`
   * (checked), runs holding a permit of the semaphore `keys`. `signal`: the call's own.
   */
  runChecked<T>(
    keys: LockKeys,
    fn: () => T | Promise<T>,
    checked: CheckedRunOptions,
    signal?: AbortSignal,
    permits?: number,
  ): Promise<T | undefined> {
    try {
      const opts = this.options.complete(checked, signal);
      const target =
        permits === undefined
          ? this.target(keys, opts)
          : checkedPermitTarget(this.config.keyPrefix, keys as string, permits);
      return this.runOn(target, fn, opts, checked);
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /** run() on a resolved target (a lock, a group or a semaphore's permit). */
  async runOn<T, H extends LockHandle>(
    target: LockTarget,
    fn: (lock: H) => T | Promise<T>,
    opts: ResolvedLockOptions,
    policies: RunOptions | undefined,
  ): Promise<T | undefined> {
    const refused = this.handles.refuse(target); // undefined on the hot path: no await
    if (refused) await refused;
    const entry = await this.enter(target, opts);
    if (!isHandle(entry)) {
      if (policies?.onBusy !== 'skip') throw await this.busyError(target, opts, entry);
      this.config.logger.debug(`Skipped: lock "${target.key}" was busy after ${opts.waitTime} ms.`);
      return undefined;
    }
    return runHeld(
      entry,
      () => this.runAs(entry, () => fn(entry as unknown as H)),
      (lost) => this.applyLostPolicy(lost, policies?.onLockLost),
    );
  }

  /** Takes `target` for the current chain (waiting as `opts` says): its handle, or busy. */
  enter(target: LockTarget, opts: ResolvedLockOptions): Promise<LockEntry | GroupHandle | Busy> {
    return kindOf(target.kind).group
      ? this.parts.groups.enter(target, opts)
      : this.parts.acquirer.enter(target, opts);
  }

  /** Runs `fn` as the owner of `handle` (a handle from acquire/tryAcquire of this engine). */
  runAs<T>(handle: LockHandle, fn: () => T): T {
    const entry = handle instanceof GroupHandle ? handle.innermost : handle;
    if (!(entry instanceof LockEntry) || entry.releaseHold !== this.parts.releaseHold) {
      throw new LockError(
        'runAs() takes a handle returned by this LockService (not by another application’s).',
      );
    }
    return this.context.run(entry, fn);
  }

  /** Runs `fn` outside the current call chain: it holds no lock, nor does what it starts. */
  detach<T>(fn: () => T): T {
    if (typeof fn !== 'function') {
      throw new LockError(`detach() needs a function, got ${describe(fn)}.`);
    }
    return this.context.exit(() => ChainHandles.inScope(fn));
  }

  /** Applies `policy` (default: the engine's) to a loss found when locked work ended. */
  applyLostPolicy(error: LockLostError, policy?: LockLostPolicy): void {
    applyLostPolicy(error, policy ?? this.config.onLockLost);
  }

  /** The semaphore `key` with `options.permits` leased permits (see RedisSemaphore). */
  semaphore(key: string, options: { permits: number }): RedisSemaphore {
    const target = permitTarget(this.config.keyPrefix, key, options);
    return new RedisSemaphore(this, this.config.store, target);
  }

  /** A campaign for the leadership of `key` (see LeaderCampaign); it campaigns once started. */
  leadership(key: string, options?: LeaderOptions): LeaderCampaign {
    const engine = {
      config: this.config,
      target: (name: string) => this.target(name),
      enter: (target: LockTarget, opts: ResolvedLockOptions) => this.enter(target, opts),
      stopped: () => this.closing !== undefined,
      outside: this.outside,
    };
    return new LeaderCampaign(campaignDriver(engine, key, options));
  }

  /** The innermost hold of the current call chain, or the one for `key` (in `mode`). */
  current(key?: string, mode?: LockMode): LockHandle | undefined {
    if (key === undefined) return this.context.innermost();
    const family = lockKind(mode, false).family;
    return this.context.find(family, this.target(key, undefined, mode).name);
  }

  /** How many times the current call chain holds `key` (in `mode`); 0 when it does not. */
  holdCount(key: string, mode?: LockMode): number {
    return this.current(key, mode)?.depth ?? 0;
  }

  /**
   * The lock's remaining lease in ms (with `mode`: of a read-write lock held in that mode);
   * null when free, Infinity when held without a lease.
   */
  remainingTtl(key: string, mode?: LockMode): Promise<number | null> {
    return this.config.store.remainingTtl(this.target(key, undefined, mode));
  }

  /**
   * Frees whatever lock lives under `key` (plain, fair with its queue, read-write with every
   * reader) whoever holds it, and wakes its waiters; true when one was held. This process's
   * holders of it are told (their signals abort).
   */
  async forceUnlock(key: string): Promise<boolean> {
    return this.forceUnlockTarget(this.target(key, undefined));
  }

  /** forceUnlock() of any target; this process's holds of it taken before the call are lost. */
  async forceUnlockTarget(target: LockTarget): Promise<boolean> {
    const before = this.parts.holds.named(target.name);
    const deleted = await this.config.store.forceUnlock(target);
    this.parts.holds.loseForced(before, target);
    return deleted;
  }

  /**
   * Stops the engine: new acquires fail and waiters are rejected at once; re-entry of held locks
   * goes on. Holds still in use after `timeout` ms are lost (their signals abort) and released;
   * in-flight attempts are waited for, so a late grant is freed before the connections close.
   */
  close(timeout = 0): Promise<void> {
    this.closed ??= this.shutdown(timeout);
    return this.closed;
  }

  private async shutdown(timeout: number): Promise<void> {
    this.closing = new LockError('The lock service is shutting down; no new locks are granted.');
    this.parts.waiters.closeAll(this.closing);
    await finishHolds(this.parts, timeout, this.config.logger);
    this.parts.holds.stop();
  }

  private target(keys: LockKeys, opts?: ResolvedLockOptions, mode = opts?.mode): LockTarget {
    const target = callTarget(this.config.keyPrefix, keys, mode, opts?.fair ?? false);
    if (opts !== undefined && opts.holdAtLeast > 0) this.parts.kept.check(target);
    return target;
  }

  /**
   * The error of a call still busy after its wait (heldByThisProcess: any member, any chain), with
   * the holder's registered process when another process holds it (lookUpHolder: one bounded
   * lookup, only now that the wait is over).
   */
  private async busyError(target: LockTarget, opts: ResolvedLockOptions, busy: Busy) {
    const here = this.parts.holds.holdsAny(target.names ?? [target.name]);
    const holder = here ? undefined : await lookUpHolder(this.config.store, target);
    const typical = this.holdTimes.typical(target.key);
    return busyError(target.key, opts.waitTime, busy, here, typical, holder);
  }

  private report(error: LockLostError): void {
    this.outside(() => {
      this.config.logger.warn(error.message);
      this.config.observer?.lost(error);
    });
  }
}
