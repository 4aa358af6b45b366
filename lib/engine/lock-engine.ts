import { AsyncResource } from 'node:async_hooks';
import { LockError, LockLostError, messageOf } from '../lock.errors';
import { now } from './clock';
import type { LockHandle } from './lock-handle';
import { LockHold } from './lock-hold';
import { LockHolds } from './lock-holds';
import type { LockObserver } from './lock-observer';
import {
  assertRunPolicies,
  resolveLockOptions,
  RUN_OPTION_NAMES,
  type LockLostPolicy,
  type LockOptions,
  type ResolvedLockOptions,
  type RunOptions,
} from './options/lock-options';
import { applyLostPolicy } from './options/lost-policy';
import { describe, lockName } from './options/validate';
import { LockEntry } from './ownership/lock-entry';
import { OwnerContext } from './ownership/owner-context';
import type { LockStore } from './store/lock-store';
import { busyError, unsynced, type Busy } from './busy';
import { LockWaiters } from './waiting/lock-waiters';
import { HoldCalls } from './hold-calls';

/** Where the engine reports what its caller cannot see. */
export interface LockEngineLogger {
  warn(message: string): void;
  debug(message: string): void;
}

/** Settings of a LockEngine (validated by the caller). */
export interface LockEngineConfig {
  store: LockStore;
  keyPrefix: string;
  /** Watchdog lease in ms. */
  leaseTime: number;
  /** Default wait in ms for acquire/run. */
  waitTime: number;
  /** Issue fencing tokens unless a call says otherwise. */
  fencing: boolean;
  /** Replicas that must acknowledge a grant unless a call says otherwise (0: none). */
  syncReplicas: number;
  /** Default policy of run() for a lost lock. */
  onLockLost: LockLostPolicy;
  logger: LockEngineLogger;
  /** Told about acquisitions, busy locks, releases, losses and renewal failures. */
  observer?: LockObserver;
}

/** Delay before trying again after a grant too few replicas acknowledged, ms. */

/**
 * The lock engine: reentrant locks owned by async call chains, kept alive by a watchdog,
 * waited for by release notice, on any LockStore. It knows nothing of Nest or of Redis.
 */
export class LockEngine {
  private readonly context = new OwnerContext();
  private readonly store: LockStore;
  private readonly holds: LockHolds;
  private readonly waiters: LockWaiters;
  /** Given to every entry this engine issues: frees its hold, and marks the entry as ours. */
  private readonly releaseHold = (hold: LockHold): Promise<void> => this.calls.release(hold);
  private readonly calls: HoldCalls;
  private closing: LockError | undefined;
  private closed: Promise<void> | undefined;
  private readonly outside: <T>(fn: () => T) => T;

  constructor(private readonly config: LockEngineConfig) {
    this.store = config.store;
    // Outside every chain: the engine's owner context and any other AsyncLocalStorage (request ids, spans).
    const root = new AsyncResource('LockEngine');
    const outside = <T>(fn: () => T): T => root.runInAsyncScope(() => this.context.exit(fn));
    this.outside = outside;
    this.holds = new LockHolds(config.store, config.leaseTime, {
      lost: (error) => this.report(error),
      renewalFailed: (error) => {
        config.logger.warn(`Lock renewal failed, will retry: ${messageOf(error)}`);
        config.observer?.renewalFailed(error);
      },
      outside,
    });
    this.waiters = new LockWaiters(config.store, config.leaseTime, {
      abandoned: (hold) => void this.calls.drop(hold),
      failed: (error) => config.logger.warn(`Lock notice subscription failed: ${messageOf(error)}`),
    });
    this.calls = new HoldCalls(config.store, this.holds, this.waiters, {
      logger: config.logger,
      observer: config.observer,
      closing: () => this.closing,
      report: (error) => this.report(error),
    });
  }

  /** How many locks this process holds now. */
  get heldCount(): number {
    return this.holds.size;
  }

  /** Takes the lock, waiting up to `waitTime`; throws LockAcquireTimeoutError after that. */
  async acquire(key: string, options?: LockOptions): Promise<LockHandle> {
    const opts = this.resolve(options, this.config.waitTime);
    const entry = await this.enter(key, opts);
    if (!(entry instanceof LockEntry))
      throw busyError(key, opts.waitTime, entry, this.heldHere(key));
    return entry;
  }

  /** Takes the lock if it is free (or within `waitTime` if given); null when busy. */
  async tryAcquire(key: string, options?: LockOptions): Promise<LockHandle | null> {
    const entry = await this.enter(key, this.resolve(options, 0));
    return entry instanceof LockEntry ? entry : null;
  }

  /**
   * Takes the lock, runs `fn` as its owner (nested locked calls re-enter), releases in
   * `finally` and returns `fn`'s result (`undefined` when busy with `onBusy: 'skip'`).
   */
  async run<T>(
    key: string,
    fn: (lock: LockHandle) => T | Promise<T>,
    options?: RunOptions,
  ): Promise<T | undefined> {
    if (typeof fn !== 'function') {
      throw new LockError(
        `run() needs the function to run under the lock as its second argument, got ${describe(fn)}.`,
      );
    }
    if (options !== undefined && options !== null) assertRunPolicies(options);
    const opts = this.resolve(options, this.config.waitTime, RUN_OPTION_NAMES);
    const entry = await this.enter(key, opts);
    if (!(entry instanceof LockEntry)) {
      if (options?.onBusy !== 'skip')
        throw busyError(key, opts.waitTime, entry, this.heldHere(key));
      this.config.logger.debug(`Skipped: lock "${key}" was busy after ${opts.waitTime} ms.`);
      return undefined;
    }
    let result: T;
    try {
      result = await this.context.run(entry, () => fn(entry));
    } catch (error) {
      // The function's own error wins over a release error (a loss is logged and emitted).
      await entry.release().catch(() => undefined);
      throw error;
    }
    try {
      await entry.release();
    } catch (error) {
      if (!(error instanceof LockLostError)) throw error;
      this.applyLostPolicy(error, options?.onLockLost);
    }
    return result;
  }

  /** Runs `fn` as the owner of `handle` (a handle from acquire/tryAcquire of this engine). */
  runAs<T>(handle: LockHandle, fn: () => T): T {
    if (!(handle instanceof LockEntry) || handle.releaseHold !== this.releaseHold) {
      throw new LockError(
        'runAs() takes a handle returned by this LockService (not by another application’s).',
      );
    }
    return this.context.run(handle, fn);
  }

  /** Runs `fn` outside the current call chain: it holds no lock, nor does what it starts. */
  detach<T>(fn: () => T): T {
    if (typeof fn !== 'function') {
      throw new LockError(`detach() needs a function, got ${describe(fn)}.`);
    }
    return this.context.exit(fn);
  }

  /** Applies `policy` (default: the engine's) to a loss found when locked work ended. */
  applyLostPolicy(error: LockLostError, policy?: LockLostPolicy): void {
    applyLostPolicy(error, policy ?? this.config.onLockLost);
  }

  /** The innermost hold of the current call chain, or the one for `key`. */
  current(key?: string): LockHandle | undefined {
    return key === undefined ? this.context.innermost() : this.context.find(key);
  }

  /** How many times the current call chain holds `key` (0 when it does not). */
  holdCount(key: string): number {
    return this.context.find(key)?.depth ?? 0;
  }

  /** The lock's remaining lease in ms; null when free, Infinity when held without a lease. */
  remainingTtl(key: string): Promise<number | null> {
    return this.store.remainingTtl(key, lockName(this.config.keyPrefix, key));
  }

  /** Deletes the lock whoever holds it and wakes its waiters; true when one was deleted. */
  async forceUnlock(key: string): Promise<boolean> {
    const name = lockName(this.config.keyPrefix, key);
    const deleted = await this.store.forceUnlock(key, name);
    const local = this.holds.get(name);
    if (local) this.holds.lose(local, 'it was deleted by forceUnlock()');
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
    this.waiters.closeAll(this.closing);
    await this.calls.finish(timeout);
    this.holds.stop();
  }

  private resolve(
    options: LockOptions | undefined,
    waitTime: number,
    known?: readonly string[],
  ): ResolvedLockOptions {
    const { leaseTime, fencing, syncReplicas } = this.config;
    return resolveLockOptions(options, { waitTime, leaseTime, fencing, syncReplicas }, known);
  }

  /** The entry, or when busy after the wait: when the holder's lease ends (monotonic), if known. */
  private async enter(key: string, opts: ResolvedLockOptions): Promise<LockEntry | Busy> {
    const name = lockName(this.config.keyPrefix, key);
    opts.signal?.throwIfAborted();
    const holder = this.context.find(key);
    if (holder) {
      const entry = await holder.enter(this.context.innermost(), opts.waitTime, opts.signal);
      return entry ?? { leaseEnds: undefined };
    }
    if (this.closing) throw this.closing;
    const started = now();
    const busy: Busy = { leaseEnds: undefined };
    let hold: LockHold | null = null;
    // Callers queued locally for this lock go first; only a no-wait try skips the queue.
    if (opts.waitTime <= 0 || !this.waiters.has(name)) {
      const first = this.calls.attempt(key, name, opts);
      const result = await (opts.syncReplicas > 0
        ? first.catch((error: unknown) => unsynced(error, busy))
        : first);
      if (typeof result !== 'number') {
        if (opts.signal?.aborted) {
          await this.calls.drop(result);
          opts.signal.throwIfAborted();
        }
        hold = result;
      } else {
        busy.leaseEnds = now() + result; // Infinity: no lease
        if (opts.waitTime > 0) hold = await this.queue(key, name, opts, started, busy);
      }
    } else {
      hold = await this.queue(key, name, opts, started, busy);
    }
    const observer = this.config.observer;
    if (observer) {
      if (hold) observer.acquired(key, now() - started);
      else observer.busy(key, now() - started);
    }
    if (hold) return new LockEntry(hold, this.context.innermost(), undefined, this.releaseHold);
    // Grants were undone for want of replica acknowledgements: say so, not "busy".
    if (busy.unsynced) throw busy.unsynced;
    return busy;
  }

  /** Waits in the lock's local queue for the rest of the wait that began at `started`. */
  private queue(
    key: string,
    name: string,
    opts: ResolvedLockOptions,
    started: number,
    busy: Busy,
  ): Promise<LockHold | null> {
    if (this.closing) throw this.closing;
    opts.signal?.throwIfAborted();
    const remaining = Math.max(0, opts.waitTime - (now() - started));
    const attempt = () =>
      this.calls.attempt(key, name, opts).then(
        (result) => {
          if (typeof result === 'number') busy.leaseEnds = now() + result;
          return result;
        },
        (error: unknown) => unsynced(error, busy),
      );
    return this.waiters.wait(name, attempt, remaining, opts.signal);
  }

  /** Whether this process holds `key` (in any chain). */
  private heldHere(key: string): boolean {
    return this.holds.get(lockName(this.config.keyPrefix, key)) !== undefined;
  }

  private report(error: LockLostError): void {
    this.outside(() => {
      this.config.logger.warn(error.message);
      this.config.observer?.lost(error);
    });
  }
}
