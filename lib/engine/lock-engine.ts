import { AsyncResource } from 'node:async_hooks';
import { randomUUID } from 'node:crypto';
import { LockAcquireTimeoutError, LockError, LockLostError } from '../lock.errors';
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
import {
  isConnectionError,
  ReplicaSyncError,
  type AcquireReply,
  type LockStore,
} from './store/lock-store';
import { resolvesWithin, sleep } from './time-limit';
import { LockWaiters } from './waiting/lock-waiters';
import { LockRedisError } from '../lock.errors';

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

/** How long a release after a known loss, or at shutdown, waits for the store, ms. */
const FINAL_RELEASE_TIMEOUT = 500;
/** Delay between tries to free a grant whose answer was lost, ms. */
const CLEANUP_RETRY_DELAY = 200;
/** Delay before trying again after a grant too few replicas acknowledged, ms. */
const SYNC_RETRY_DELAY = 100;

/**
 * The lock engine: reentrant locks owned by async call chains, kept alive by a watchdog,
 * waited for by release notice, on any LockStore. It knows nothing of Nest or of Redis.
 */
export class LockEngine {
  /** This engine's id: the first half of every owner id. */
  private readonly clientId = randomUUID();
  private ownerSeq = 0;
  private readonly context = new OwnerContext();
  private readonly store: LockStore;
  private readonly holds: LockHolds;
  private readonly waiters: LockWaiters;
  /** Given to every entry this engine issues: frees its hold, and marks the entry as ours. */
  private readonly releaseHold = (hold: LockHold): Promise<void> => this.release(hold);
  /** Attempts sent and not yet settled; close() waits for them. */
  private inFlight = 0;
  private drained: (() => void) | undefined;
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
        config.logger.warn(`Lock renewal failed, will retry: ${text(error)}`);
        config.observer?.renewalFailed(error);
      },
      outside,
    });
    this.waiters = new LockWaiters(config.store, config.leaseTime, {
      abandoned: (hold) => void this.drop(hold),
      failed: (error) => config.logger.warn(`Lock notice subscription failed: ${text(error)}`),
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
    if (!(entry instanceof LockEntry)) throw this.busyError(key, opts.waitTime, entry);
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
      if (options?.onBusy !== 'skip') throw this.busyError(key, opts.waitTime, entry);
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
    // Grants already answered reach their (rejected) waiters and are dropped, not "lost".
    await new Promise<void>((resolve) => setImmediate(resolve));
    const deadline = now() + timeout;
    while (this.holds.size > 0 && now() < deadline) await sleep(Math.min(50, deadline - now()));
    const remaining = this.holds.all();
    for (const hold of remaining) {
      this.holds.lose(
        hold,
        `the application shut down while its work still ran (shutdownTimeout ${timeout} ms), so it was released`,
      );
    }
    const releasing = Promise.all([
      ...remaining.map((hold) => this.drop(hold)),
      this.inFlight === 0 ? undefined : new Promise<void>((resolve) => (this.drained = resolve)),
    ]);
    if (!(await resolvesWithin(releasing, FINAL_RELEASE_TIMEOUT))) {
      this.config.logger.warn(
        `Redis did not answer the final releases within ${FINAL_RELEASE_TIMEOUT} ms; locks not released expire within their lease.`,
      );
    }
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
      const first = this.attempt(key, name, opts);
      const result = await (opts.syncReplicas > 0
        ? first.catch((error: unknown) => unsynced(error, busy))
        : first);
      if (typeof result !== 'number') {
        if (opts.signal?.aborted) {
          await this.drop(result);
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
      this.attempt(key, name, opts).then(
        (result) => {
          if (typeof result === 'number') busy.leaseEnds = now() + result;
          return result;
        },
        (error: unknown) => unsynced(error, busy),
      );
    return this.waiters.wait(name, attempt, remaining, opts.signal);
  }

  /**
   * One acquire attempt with a fresh owner id: the hold, or the holder's remaining lease.
   * Bounded in time (the wait, kept between a third of the lease and the lease); a grant that
   * comes later is freed, and so is one whose answer was lost on the connection. One promise
   * and one timer per attempt: this is the path every lock call takes.
   */
  private attempt(
    key: string,
    name: string,
    opts: ResolvedLockOptions,
  ): Promise<LockHold | number> {
    if (this.closing) return Promise.reject(this.closing);
    const owner = `${this.clientId}:${++this.ownerSeq}`;
    const { leaseTime, fencing, syncReplicas } = opts;
    const sentAt = now();
    const limit = Math.min(Math.max(opts.waitTime, leaseTime / 3), leaseTime);
    this.inFlight++;
    return new Promise<LockHold | number>((resolve, reject) => {
      let timedOut = false;
      const timer = setTimeout(() => {
        timedOut = true;
        void this.cleanup(key, name, owner, sentAt + leaseTime);
        reject(new LockRedisError(key, 'acquire', new Error(`no answer within ${limit} ms`)));
      }, limit);
      timer.unref();
      this.store.acquire({ key, name, owner, leaseTime, fencing, syncReplicas }).then(
        (reply) => {
          this.settled(timer);
          let result: LockHold | number;
          try {
            result = this.granted(reply, key, name, owner, opts, sentAt);
          } catch (error) {
            reject(error);
            return;
          }
          // An answer after the bound: the caller has moved on, so a late grant is freed.
          if (!timedOut) resolve(result);
          else if (typeof result !== 'number') void this.drop(result);
        },
        (error: unknown) => {
          this.settled(timer);
          if (timedOut) return;
          // A script that failed midway may have written the lock (Redis keeps a script's writes).
          if (error instanceof LockRedisError)
            void this.cleanup(key, name, owner, sentAt + leaseTime);
          reject(error);
        },
      );
    });
  }

  /** An attempt's store call settled: stop its bound, and wake close() when it was the last. */
  private settled(timer: NodeJS.Timeout): void {
    clearTimeout(timer);
    if (--this.inFlight === 0) this.drained?.();
  }

  private granted(
    reply: AcquireReply,
    key: string,
    name: string,
    owner: string,
    opts: ResolvedLockOptions,
    sentAt: number,
  ): LockHold | number {
    if (!reply.granted) return reply.ttl;
    const { leaseTime, watchdog } = opts;
    const hold = new LockHold(key, name, owner, leaseTime, watchdog, reply.fencingToken, sentAt);
    hold.syncReplicas = opts.syncReplicas;
    if (this.closing) {
      // close() began while the store granted it: nobody will release it later, so free it now.
      void this.drop(hold);
      throw this.closing;
    }
    this.holds.add(hold);
    return hold;
  }

  /**
   * Frees an entry's hold in the store; rejects with LockLostError when it had been lost. One
   * promise and one timer per release, as for an attempt.
   */
  private release(hold: LockHold): Promise<void> {
    const lost = hold.lostError;
    if (hold.released) return lost ? Promise.reject(lost) : Promise.resolve();
    this.holds.remove(hold);
    hold.released = true;
    // After a known loss, or with the lease already over, the answer matters little: bounded.
    const limit = lost
      ? FINAL_RELEASE_TIMEOUT
      : Math.max(hold.validUntil - now(), FINAL_RELEASE_TIMEOUT);
    return new Promise<void>((resolve, reject) => {
      let timedOut = false;
      const timer = setTimeout(() => {
        timedOut = true;
        if (lost) reject(lost);
        else {
          this.config.logger.warn(
            `Releasing lock "${hold.key}" got no answer; it expires on its own.`,
          );
          resolve();
        }
      }, limit);
      timer.unref();
      this.store.release(hold).then(
        (listeners) => {
          clearTimeout(timer);
          if (timedOut) return;
          if (lost) return reject(lost);
          if (listeners !== null) {
            this.waiters.released(hold.name, listeners);
            this.config.observer?.released(hold.key, now() - hold.sentAt);
            return resolve();
          }
          const error = new LockLostError(
            hold.key,
            'it had expired or been deleted before release',
          );
          this.report(error);
          reject(error);
        },
        (error: unknown) => {
          clearTimeout(timer);
          if (timedOut) return;
          // The lock stays until its lease ends (the watchdog no longer renews it).
          this.config.logger.warn(
            `Releasing lock "${hold.key}" failed (${text(error)}); it will expire within ${hold.leaseTime} ms.`,
          );
          if (lost) reject(lost);
          else resolve();
        },
      );
    });
  }

  /** Frees a hold nobody uses (abandoned, late, or at shutdown), quietly. */
  private async drop(hold: LockHold): Promise<void> {
    this.holds.remove(hold);
    if (hold.released) return;
    hold.released = true;
    const listeners = await this.store.release(hold).catch(() => null);
    if (listeners !== null) this.waiters.released(hold.name, listeners);
  }

  /** Frees what an attempt with a lost answer may have taken, retrying until `until`. */
  private async cleanup(key: string, name: string, owner: string, until: number): Promise<void> {
    while (now() < until) {
      try {
        const listeners = await this.store.release({ key, name, owner });
        if (listeners !== null) this.waiters.released(name, listeners);
        return;
      } catch (error) {
        if (!isConnectionError(error)) return;
        await sleep(CLEANUP_RETRY_DELAY);
      }
    }
  }

  private report(error: LockLostError): void {
    this.outside(() => {
      this.config.logger.warn(error.message);
      this.config.observer?.lost(error);
    });
  }

  private busyError(key: string, waitTime: number, busy: Busy): LockAcquireTimeoutError {
    const heldHere = this.holds.get(lockName(this.config.keyPrefix, key)) !== undefined;
    const left = busy.leaseEnds === undefined ? NaN : Math.max(0, busy.leaseEnds - now());
    return new LockAcquireTimeoutError(
      key,
      waitTime,
      heldHere,
      Number.isFinite(left) ? left : undefined,
    );
  }
}

/** A lock still busy after the wait: when its holder's lease ends, as last seen. */
interface Busy {
  leaseEnds: number | undefined;
  /** The last grant undone for want of replica acknowledgements (syncReplicas). */
  unsynced?: ReplicaSyncError;
}

function text(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * A grant the store undid because too few replicas acknowledged it: remembered on `busy` and
 * answered as "busy, try again in SYNC_RETRY_DELAY ms" (the wait bounds the retries); any other
 * error is passed on.
 */
function unsynced(error: unknown, busy: Busy): number {
  if (!(error instanceof ReplicaSyncError)) throw error;
  busy.unsynced = error;
  return SYNC_RETRY_DELAY;
}
