import { Inject, Injectable } from '@nestjs/common';
import type { Observable } from 'rxjs';
import {
  assertOneOf,
  type LockEngine,
  type RedisSemaphore,
  type LockKeys,
  type LockMode,
  type LockHandle,
  type LeaderOptions,
  type LockOptions,
  type RunOptions,
} from '../core';
import type { LockStore } from '../store';
import { within, TIMED_OUT } from '../time';
import { LockError, type LockLostError } from '../errors';
import { Leaders } from './leadership/leaders';
import type { Leadership } from './leadership/leadership';
import { LOCK_ENGINE, LOCK_STORE } from './lock-tokens';
import { LockEvents, type LockEvent } from './observability/lock-events';
import { SERVICE_ENGINE } from './service-engine';

/** Selects the read or the write hold of a read-write lock in the inspecting methods. */
export interface ModeOption {
  mode?: LockMode;
}

function modeOf(options: ModeOption | undefined): LockMode | undefined {
  const mode = options?.mode;
  if (mode !== undefined) assertOneOf(mode, ['read', 'write'], 'mode');
  return mode;
}

/**
 * Distributed, reentrant locks on Redis. Injected wherever RedisLockModule is imported (it is
 * global by default). Ownership follows the async call chain: a chain that holds a lock may
 * take it again at no cost; any other chain, here or in another process, waits.
 */
@Injectable()
export class LockService {
  /** Emits a LockLostError for every lock lost while held (also logged once). */
  readonly lockLost$: Observable<LockLostError>;
  /**
   * What happens to this application's locks: acquired (with the wait), busy after the wait,
   * released (with the hold time), lost, renewal failed. Keys only with `exposeKeys`.
   */
  readonly events$: Observable<LockEvent>;

  constructor(
    @Inject(LOCK_ENGINE) private readonly engine: LockEngine,
    @Inject(LOCK_STORE) private readonly store: LockStore,
    @Inject(LockEvents) events: LockEvents,
    @Inject(Leaders) private readonly leaders: Leaders,
  ) {
    this.lockLost$ = events.lost$;
    this.events$ = events.events$;
  }

  /** The engine `@Locked` and `@Semaphore` run on, with the options they checked when decorating. */
  get [SERVICE_ENGINE](): LockEngine {
    return this.engine;
  }

  /**
   * Takes the lock `key` (an array: every key of a multi-lock, all or none), waiting up to
   * `waitTime` (module default), then throws LockAcquireTimeoutError. Re-enters at once when
   * the current call chain holds it. `mode` takes a read-write lock, `fair` a fair lock.
   */
  acquire(key: LockKeys, options?: LockOptions): Promise<LockHandle> {
    return this.engine.acquire(key, options);
  }

  /** Takes the lock if it is free, or within `options.waitTime` if given; null when busy. */
  tryAcquire(key: LockKeys, options?: LockOptions): Promise<LockHandle | null> {
    return this.engine.tryAcquire(key, options);
  }

  /**
   * The semaphore `key` with `options.permits` leased permits: at most that many holders at
   * once across every process (see RedisSemaphore).
   */
  semaphore(key: string, options: { permits: number }): RedisSemaphore {
    return this.engine.semaphore(key, options);
  }

  /**
   * Takes the lock, runs `fn` as its owner, releases in `finally` and returns `fn`'s result:
   * the programmatic twin of `@Locked`. With `onBusy: 'skip'`, resolves `undefined` without
   * running `fn` when the lock is still busy after the wait.
   */
  run<T>(
    key: LockKeys,
    fn: (lock: LockHandle) => T | Promise<T>,
    options: RunOptions & { onBusy: 'skip' },
  ): Promise<T | undefined>;
  run<T>(key: LockKeys, fn: (lock: LockHandle) => T | Promise<T>, options?: RunOptions): Promise<T>;
  run<T>(
    key: LockKeys,
    fn: (lock: LockHandle) => T | Promise<T>,
    options?: RunOptions,
  ): Promise<T | undefined> {
    return this.engine.run(key, fn, options);
  }

  /**
   * This application's campaign for the leadership of `name` (one per name, shared with
   * `@LeaderOnly(name)`): it campaigns from application bootstrap until closed, on a fenced lock
   * of that name (`options`: its lease, fencing). Options given again must match the first.
   */
  leader(name: string, options?: LeaderOptions): Leadership {
    return this.leaders.get(name, options);
  }

  /**
   * Runs `fn` as the owner of a handle from `acquire`/`tryAcquire`, so locked calls inside it
   * re-enter instead of waiting for the handle's own lock.
   */
  runAs<T>(lock: LockHandle, fn: () => T): T {
    return this.engine.runAs(lock, fn);
  }

  /**
   * Runs `fn` outside the current call chain's locks: neither `fn` nor anything it starts
   * (queue jobs, event listeners, pooled work) holds or re-enters them. See docs/reentrancy.md.
   */
  detach<T>(fn: () => T): T {
    return this.engine.detach(fn);
  }

  /**
   * The handle the current call chain holds: the innermost one, or the one for `key` (with
   * `mode`: that hold of a read-write lock).
   */
  current(key?: string, options?: ModeOption): LockHandle | undefined {
    return this.engine.current(key, modeOf(options));
  }

  /** How many locks this application holds now. */
  get heldCount(): number {
    return this.engine.heldCount;
  }

  /**
   * Round-trip time of a PING to Redis, ms; rejects when Redis does not answer within `timeout`
   * ms. A LockStore without `ping()` (a store of your own) answers 0.
   */
  async ping(timeout = 1_000): Promise<number> {
    const store = this.store as LockStore & { ping?(): Promise<number> };
    if (typeof store.ping !== 'function') return 0;
    const latency = await within(store.ping(), timeout);
    if (latency === TIMED_OUT)
      throw new LockError(`Redis did not answer a PING within ${timeout} ms.`);
    return latency;
  }

  /**
   * Whether anyone (any process or Redisson client) holds `key` now; with `mode`, whether its
   * read-write lock is held in that mode.
   */
  async isLocked(key: string, options?: ModeOption): Promise<boolean> {
    return (await this.engine.remainingTtl(key, modeOf(options))) !== null;
  }

  /** Whether the current call chain holds `key` (with `mode`: that hold of a read-write lock). */
  isHeldByCurrentContext(key: string, options?: ModeOption): boolean {
    return this.engine.holdCount(key, modeOf(options)) > 0;
  }

  /** How deep the current call chain holds `key` (in `mode`): 0 when it does not, 1 outermost, … */
  holdCount(key: string, options?: ModeOption): number {
    return this.engine.holdCount(key, modeOf(options));
  }

  /**
   * The lock's remaining lease in ms (with `mode`: of its read-write lock held in that mode);
   * null when free, Infinity when held without a lease.
   */
  remainingTtl(key: string, options?: ModeOption): Promise<number | null> {
    return this.engine.remainingTtl(key, modeOf(options));
  }

  /**
   * Frees whatever lock lives under `key` whoever holds it: a plain lock, a fair lock and its
   * queue, a read-write lock's readers and writer; wakes its waiters (an operator's tool).
   * True when a lock was held. Its holders are told through their handles' signals.
   */
  forceUnlock(key: string): Promise<boolean> {
    return this.engine.forceUnlock(key);
  }
}
