import { randomBytes, randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import {
  LockAcquireTimeoutError,
  LockError,
  LockKeyError,
  LockLostError,
  LockRedisError,
} from '../lock.errors';
import { FirstAttempts } from './first-attempts';
import { LockEntry } from './lock-entry';
import type { LockHandle } from './lock-handle';
import { LockHold } from './lock-hold';
import {
  assertLostPolicy,
  describe,
  RUN_OPTION_NAMES,
  resolveLockOptions,
  type LockOptions,
  type ResolvedLockOptions,
} from './lock-options';
import { LockScripts } from './lock-scripts';
import { LockWaiters } from './lock-waiters';
import { OwnerContext } from './owner-context';
import { channelName, tokenKey, unlockLatchKey } from './redis-names';
import { resolvesWithin } from './time-limit';
import { Watchdog } from './watchdog';

/** What to do when a lock was lost while `run`'s function (or a `@Locked` method) ran. */
export type LockLostPolicy = 'throw' | 'ignore' | ((error: LockLostError) => void);

/** Options of `run` and `@Locked`. */
export interface RunOptions extends LockOptions {
  /**
   * When the lock was lost while the function ran: `'throw'` (default) rejects with
   * `LockLostError` after the function settled, `'ignore'` returns its result anyway, a
   * callback is called with the error (and the result is returned unless it throws).
   */
  onLockLost?: LockLostPolicy;
}

/** Where the engine reports what its caller cannot see. */
export interface LockEngineLogger {
  warn(message: string): void;
  error(message: string): void;
}

/** Settings of a LockEngine (validated by the caller). */
export interface LockEngineConfig {
  /** Connection for scripts and commands. */
  client: Redis;
  /** Connection dedicated to pub/sub (release messages). */
  subscriber: Redis;
  keyPrefix: string;
  /** Watchdog lease in ms. */
  leaseTime: number;
  /** Default wait in ms for acquire/run. */
  waitTime: number;
  /** Issue fencing tokens. */
  fencing: boolean;
  /** Default policy of run() for a lost lock. */
  onLockLost: LockLostPolicy;
  logger: LockEngineLogger;
  /** Called once for every lock lost while held. */
  onLost?: (error: LockLostError) => void;
}

/** Longest lock name accepted, in UTF-8 bytes (keyPrefix included). */
export const MAX_KEY_BYTES = 1024;
/** How long an unlock latch (idempotent release) stays in Redis, in ms. */
const UNLOCK_LATCH_TTL = 10_000;
/** How long close() waits for Redis to answer its final releases, in ms. */
const FINAL_RELEASE_TIMEOUT = 500;

/**
 * The lock engine: Redisson-compatible reentrant locks with call-chain ownership, a batching
 * watchdog and pub/sub-driven waiting. It knows nothing of Nest.
 */
export class LockEngine {
  /** This client's id: the first half of every owner field. */
  readonly clientId = randomUUID();
  private readonly requestIdPrefix = randomBytes(8).toString('hex');
  private ownerSeq = 0;
  private readonly context = new OwnerContext();
  private readonly watchdog: Watchdog;
  private readonly waiters: LockWaiters;
  private readonly holds = new Map<string, LockHold>();
  /** Given to every entry this engine issues: frees its hold, and marks the entry as ours. */
  private readonly releaseHold = (hold: LockHold): Promise<void> => this.release(hold);
  private readonly firstAttempts = new FirstAttempts((hold) => void this.releaseQuietly(hold));
  private closing: LockError | undefined;

  constructor(private readonly config: LockEngineConfig) {
    this.watchdog = new Watchdog(config.leaseTime, {
      renew: (holds, leaseTime) => this.renew(holds, leaseTime),
      lost: (hold, reason) => this.lose(hold, reason),
      failed: (error) =>
        config.logger.warn(`Lock renewal failed, will retry: ${errorMessage(error)}`),
    });
    this.waiters = new LockWaiters(config.subscriber, config.leaseTime, {
      abandoned: (hold) => void this.releaseQuietly(hold),
      failed: (error) =>
        config.logger.warn(`Lock channel subscription failed: ${errorMessage(error)}`),
    });
  }

  /** Takes the lock, waiting up to `waitTime`; throws LockAcquireTimeoutError after that. */
  async acquire(key: string, options?: LockOptions): Promise<LockHandle> {
    const opts = this.resolve(options, this.config.waitTime);
    const entry = await this.enter(key, opts);
    if (entry === null) throw new LockAcquireTimeoutError(key, opts.waitTime);
    return entry;
  }

  /** Takes the lock if it is free (or within `waitTime` if given); null when busy. */
  async tryAcquire(key: string, options?: LockOptions): Promise<LockHandle | null> {
    return this.enter(key, this.resolve(options, 0));
  }

  /**
   * Takes the lock, runs `fn` as its owner (nested locked calls re-enter), releases in
   * `finally` and returns `fn`'s result.
   */
  async run<T>(
    key: string,
    fn: (lock: LockHandle) => T | Promise<T>,
    options?: RunOptions,
  ): Promise<T> {
    if (typeof fn !== 'function') {
      throw new LockError(
        `run() needs the function to run under the lock as its second argument, got ${describe(fn)}.`,
      );
    }
    if (options?.onLockLost !== undefined) assertLostPolicy(options.onLockLost);
    const opts = this.resolve(options, this.config.waitTime, RUN_OPTION_NAMES);
    const entry = await this.enter(key, opts);
    if (entry === null) throw new LockAcquireTimeoutError(key, opts.waitTime);
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
      this.applyLostPolicy(error, options?.onLockLost ?? this.config.onLockLost);
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

  /** The innermost hold of the current call chain, or the one for `key`. */
  current(key?: string): LockHandle | undefined {
    return key === undefined ? this.context.innermost() : this.context.find(key);
  }

  /** Whether the current call chain holds `key`. */
  isHeldByCurrentContext(key: string): boolean {
    return this.context.find(key) !== undefined;
  }

  /** How many times the current call chain holds `key` (0 when it does not). */
  holdCount(key: string): number {
    return this.context.find(key)?.depth ?? 0;
  }

  /** Whether anyone (any process, any client) holds `key` now. */
  async isLocked(key: string): Promise<boolean> {
    const name = this.nameOf(key);
    return Number(await this.redis(key, 'inspect', this.config.client.exists(name))) === 1;
  }

  /** The lock's remaining lease in ms; null when free, Infinity when held without a lease. */
  async remainingTtl(key: string): Promise<number | null> {
    const name = this.nameOf(key);
    const ttl = Number(await this.redis(key, 'inspect', this.config.client.pttl(name)));
    if (ttl === -2) return null;
    return ttl === -1 ? Infinity : ttl;
  }

  /** Deletes the lock whoever holds it and wakes its waiters; true when one was deleted. */
  async forceUnlock(key: string): Promise<boolean> {
    const name = this.nameOf(key);
    const deleted = await this.redis(
      key,
      'force-unlock',
      LockScripts.forceUnlock.run(this.config.client, 1, name, channelName(name)),
    );
    const local = this.holds.get(name);
    if (local) this.lose(local, 'it was deleted by forceUnlock()');
    return Number(deleted) === 1;
  }

  /**
   * Stops the engine: new acquires fail and waiters are rejected at once; locks still held are
   * released when their calls end, or after `timeout` ms at the latest (waiting up to
   * FINAL_RELEASE_TIMEOUT ms for Redis to answer); then the watchdog stops. Connections are the
   * caller's to close.
   */
  async close(timeout = 0): Promise<void> {
    if (this.closing) return;
    this.closing = new LockError('The lock service is shutting down; no new locks are granted.');
    this.waiters.rejectAll(this.closing);
    const deadline = Date.now() + timeout;
    while (this.holds.size > 0 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, Math.min(50, deadline - Date.now())));
    }
    const releasing = Promise.all([
      ...[...this.holds.values()].map((hold) => this.releaseQuietly(hold)),
      // A first attempt Redis grants now frees its lock itself (see attempt()); waiting for it
      // keeps that release ahead of the connection's QUIT.
      ...this.firstAttempts.inFlight(),
    ]);
    if (!(await resolvesWithin(releasing, FINAL_RELEASE_TIMEOUT))) {
      this.config.logger.warn(
        `Redis did not answer the final releases within ${FINAL_RELEASE_TIMEOUT} ms; locks not released expire within their lease.`,
      );
    }
    this.watchdog.stop();
  }

  private resolve(
    options: LockOptions | undefined,
    waitTime: number,
    known?: readonly string[],
  ): ResolvedLockOptions {
    return resolveLockOptions(options, { waitTime, leaseTime: this.config.leaseTime }, known);
  }

  private async enter(key: string, opts: ResolvedLockOptions): Promise<LockEntry | null> {
    if (this.closing) throw this.closing;
    const name = this.nameOf(key);
    opts.signal?.throwIfAborted();
    const outer = this.context.innermost();
    const holder = this.context.find(key);
    if (holder) return holder.enter(outer, opts.waitTime, opts.signal);
    const hold = await this.acquireHold(key, name, opts);
    return hold && new LockEntry(hold, outer, undefined, this.releaseHold);
  }

  private async acquireHold(
    key: string,
    name: string,
    opts: ResolvedLockOptions,
  ): Promise<LockHold | null> {
    const started = Date.now();
    const channel = channelName(name);
    const field = `${this.clientId}:${++this.ownerSeq}`;
    const attempt = () => this.attempt(key, name, channel, field, opts);
    // Callers queued locally for this lock go first; only a no-wait try skips the queue.
    if (opts.waitTime <= 0 || !this.waiters.has(channel)) {
      // Bounded by the wait, but Redis gets at least a watchdog period (a third of the lease).
      const timeout = Math.max(opts.waitTime, Math.floor(this.config.leaseTime / 3));
      const result = await this.firstAttempts.bound(key, attempt(), started, timeout);
      if (typeof result !== 'number') {
        if (opts.signal?.aborted) {
          await this.releaseQuietly(result);
          opts.signal.throwIfAborted();
        }
        return result;
      }
      if (opts.waitTime <= 0) return null;
    }
    if (this.closing) throw this.closing;
    const remaining = Math.max(0, opts.waitTime - (Date.now() - started));
    return this.waiters.wait(channel, attempt, remaining, opts.signal);
  }

  /** One acquire script call; the hold on success, else the holder's PTTL. */
  private async attempt(
    key: string,
    name: string,
    channel: string,
    field: string,
    opts: ResolvedLockOptions,
  ): Promise<LockHold | number> {
    if (this.closing) throw this.closing;
    const sentAt = Date.now();
    // >= 0: acquired, the fencing token; < 0: busy, the holder's PTTL is -2 - result.
    const result = Number(
      await this.redis(
        key,
        'acquire',
        LockScripts.acquire.run(
          this.config.client,
          2,
          name,
          tokenKey(name),
          opts.leaseTime,
          field,
          this.config.fencing ? '1' : '0',
        ),
      ),
    );
    if (result < 0) return -2 - result;
    const hold = new LockHold(
      key,
      name,
      channel,
      field,
      opts.leaseTime,
      opts.watchdog,
      this.config.fencing ? result : undefined,
      sentAt,
    );
    const closing = this.closingError();
    if (closing) {
      // close() began while Redis granted it: nobody will release it later, so free it now.
      void this.releaseQuietly(hold);
      throw closing;
    }
    this.holds.set(name, hold);
    if (hold.watchdog) {
      this.watchdog.add(hold);
    } else {
      hold.expiryTimer = setTimeout(
        () => this.lose(hold, `its explicit lease of ${hold.leaseTime} ms expired`),
        hold.validUntil - Date.now(),
      );
      hold.expiryTimer.unref();
    }
    return hold;
  }

  /** Frees a hold in Redis; throws LockLostError when it had been lost. */
  private async release(hold: LockHold): Promise<void> {
    this.untrack(hold);
    const lost = hold.lostError;
    hold.released = true;
    // 32 hex digits, as Redisson's: this engine's random half, then the owner's sequence number.
    const requestId =
      this.requestIdPrefix + hold.field.slice(this.clientId.length + 1).padStart(16, '0');
    let result: unknown;
    try {
      result = await LockScripts.release.run(
        this.config.client,
        2,
        hold.name,
        unlockLatchKey(hold.name, requestId),
        hold.channel,
        hold.field,
        UNLOCK_LATCH_TTL,
      );
    } catch (error) {
      // The lock stays until its lease ends (the watchdog no longer renews it).
      this.config.logger.warn(
        `Releasing lock "${hold.key}" failed (${errorMessage(error)}); it will expire within ${hold.leaseTime} ms.`,
      );
      if (lost) throw lost;
      return;
    }
    if (lost) throw lost;
    if (result === null) {
      const error = new LockLostError(hold.key, 'it had expired or been deleted before release');
      this.report(error);
      throw error;
    }
    this.waiters.released(hold.channel, Number(result));
  }

  /** Set once close() began (read through a call: it can change across an await). */
  private closingError(): LockError | undefined {
    return this.closing;
  }

  private async releaseQuietly(hold: LockHold): Promise<void> {
    await this.release(hold).catch(() => undefined);
  }

  private untrack(hold: LockHold): void {
    if (this.holds.get(hold.name) === hold) this.holds.delete(hold.name);
    if (hold.watchdog) this.watchdog.remove(hold);
    clearTimeout(hold.expiryTimer);
  }

  private async renew(holds: readonly LockHold[], leaseTime: number): Promise<boolean[]> {
    const renewed = (await LockScripts.renew.run(
      this.config.client,
      holds.length,
      ...holds.map((hold) => hold.name),
      leaseTime,
      ...holds.map((hold) => hold.field),
    )) as number[];
    return renewed.map((value) => Number(value) === 1);
  }

  private lose(hold: LockHold, reason: string): void {
    if (!hold.lose(reason)) return;
    this.untrack(hold);
    this.report(hold.lostError!);
  }

  private report(error: LockLostError): void {
    this.config.logger.warn(error.message);
    this.config.onLost?.(error);
  }

  /** A Redis call's result, its failure turned into a LockRedisError. */
  private redis<T>(key: string, operation: string, pending: Promise<T>): Promise<T> {
    return pending.catch((error: unknown) => {
      throw new LockRedisError(key, operation, error);
    });
  }

  private applyLostPolicy(error: LockLostError, policy: LockLostPolicy): void {
    if (policy === 'throw') throw error;
    if (typeof policy === 'function') policy(error);
  }

  private nameOf(key: string): string {
    if (typeof key !== 'string' || key.length === 0) {
      throw new LockKeyError(`A lock key must be a non-empty string, got ${describe(key)}.`);
    }
    if (!key.isWellFormed()) {
      throw new LockKeyError(
        `Lock key ${describe(key)} contains a lone UTF-16 surrogate, which is not valid unicode: Redis would store it as U+FFFD, so different keys would share one lock.`,
      );
    }
    const name = this.config.keyPrefix + key;
    if (name.length * 3 > MAX_KEY_BYTES && Buffer.byteLength(name) > MAX_KEY_BYTES) {
      throw new LockKeyError(
        `Lock key "${name.slice(0, 40)}…" is ${Buffer.byteLength(name)} bytes long; the limit is ${MAX_KEY_BYTES}. Build keys from ids, not payloads.`,
      );
    }
    return name;
  }
}

function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
