import {
  Inject,
  Injectable,
  Logger,
  type BeforeApplicationShutdown,
  type OnApplicationShutdown,
  type OnModuleInit,
} from '@nestjs/common';
import { Subject, type Observable } from 'rxjs';
import { LockEngine } from './engine/lock-engine';
import type { LockHandle } from './engine/lock-handle';
import type { LockOptions, RunOptions } from './engine/options/lock-options';
import { IOREDIS_MAJOR, openConnections } from './engine/redis/redis-connections';
import { RedisStore } from './engine/redis/redis-store';
import type { LockLostError } from './lock.errors';
import { LOGGER_CONTEXT } from './redis-lock.constants';
import { REDIS_LOCK_MODULE_OPTIONS } from './redis-lock.module-definition';
import type { RedisLockModuleOptions } from './redis-lock-options.interface';
import { resolveModuleOptions, type StartupCheck } from './redis-lock-options.validation';

/** Quiet period between two logged connection errors of one connection, ms. */
const CONNECTION_ERROR_LOG_INTERVAL = 5_000;
/** How long the startup check waits for Redis, ms. */
const STARTUP_CHECK_TIMEOUT = 5_000;

/**
 * Distributed, reentrant locks on Redis. Injected wherever RedisLockModule is imported (it is
 * global by default). Ownership follows the async call chain: a chain that holds a lock may
 * take it again at no cost; any other chain, here or in another process, waits.
 */
@Injectable()
export class LockService implements OnModuleInit, BeforeApplicationShutdown, OnApplicationShutdown {
  /** Emits a LockLostError for every lock lost while held (also logged once). */
  readonly lockLost$: Observable<LockLostError>;
  private readonly logger = new Logger(LOGGER_CONTEXT);
  private readonly lost = new Subject<LockLostError>();
  private readonly store: RedisStore;
  private readonly engine: LockEngine;
  private readonly shutdownTimeout: number;
  private readonly checkOnStartup: StartupCheck;

  constructor(@Inject(REDIS_LOCK_MODULE_OPTIONS) options: RedisLockModuleOptions) {
    const resolved = resolveModuleOptions(options);
    this.shutdownTimeout = resolved.shutdownTimeout;
    this.checkOnStartup = resolved.checkOnStartup;
    this.lockLost$ = this.lost.asObservable();
    const connections = openConnections(resolved);
    this.logConnectionErrors(connections.subscriber, 'pub/sub');
    if (!resolved.client) this.logConnectionErrors(connections.client, 'command');
    if (connections.client.isCluster && !connections.canShard) {
      this.logger.warn(
        `ioredis ${IOREDIS_MAJOR} does not resubscribe sharded pub/sub channels after a cluster failover (ioredis 6 does): release notices use classic pub/sub, and a waiter may also wake only when the holder's lease ends.`,
      );
    }
    this.store = new RedisStore(connections, resolved.syncTimeout);
    this.engine = new LockEngine({
      store: this.store,
      keyPrefix: resolved.keyPrefix,
      leaseTime: resolved.leaseTime,
      waitTime: resolved.waitTime,
      fencing: resolved.fencing,
      syncReplicas: resolved.syncReplicas,
      onLockLost: resolved.onLockLost,
      logger: this.logger,
      onLost: (error) => this.lost.next(error),
    });
  }

  /** Connects to Redis as `checkOnStartup` says: fail the bootstrap, warn, or not wait. */
  async onModuleInit(): Promise<void> {
    const connecting = this.store.connect(STARTUP_CHECK_TIMEOUT);
    if (this.checkOnStartup === 'off') {
      connecting.catch(() => undefined);
      return;
    }
    try {
      await connecting;
    } catch (error) {
      if (this.checkOnStartup === 'fail') {
        await this.store.close(); // a failed bootstrap leaves no socket behind
        throw error;
      }
      this.logger.warn(`${(error as Error).message} Lock calls fail until it is reachable.`);
    }
  }

  /**
   * Takes the lock `key`, waiting up to `waitTime` (module default), then throws
   * LockAcquireTimeoutError. Re-enters at once when the current call chain holds it.
   */
  acquire(key: string, options?: LockOptions): Promise<LockHandle> {
    return this.engine.acquire(key, options);
  }

  /** Takes the lock if it is free, or within `options.waitTime` if given; null when busy. */
  tryAcquire(key: string, options?: LockOptions): Promise<LockHandle | null> {
    return this.engine.tryAcquire(key, options);
  }

  /**
   * Takes the lock, runs `fn` as its owner, releases in `finally` and returns `fn`'s result:
   * the programmatic twin of `@Locked`. With `onBusy: 'skip'`, resolves `undefined` without
   * running `fn` when the lock is still busy after the wait.
   */
  run<T>(
    key: string,
    fn: (lock: LockHandle) => T | Promise<T>,
    options: RunOptions & { onBusy: 'skip' },
  ): Promise<T | undefined>;
  run<T>(key: string, fn: (lock: LockHandle) => T | Promise<T>, options?: RunOptions): Promise<T>;
  run<T>(
    key: string,
    fn: (lock: LockHandle) => T | Promise<T>,
    options?: RunOptions,
  ): Promise<T | undefined> {
    return this.engine.run(key, fn, options);
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

  /** The handle the current call chain holds: the innermost one, or the one for `key`. */
  current(key?: string): LockHandle | undefined {
    return this.engine.current(key);
  }

  /** Whether anyone (any process or Redisson client) holds `key` now. */
  async isLocked(key: string): Promise<boolean> {
    return (await this.engine.remainingTtl(key)) !== null;
  }

  /** Whether the current call chain holds `key`. */
  isHeldByCurrentContext(key: string): boolean {
    return this.engine.holdCount(key) > 0;
  }

  /** How deep the current call chain holds `key`: 0 when it does not, 1 outermost, … */
  holdCount(key: string): number {
    return this.engine.holdCount(key);
  }

  /** The lock's remaining lease in ms; null when free, Infinity when held without a lease. */
  remainingTtl(key: string): Promise<number | null> {
    return this.engine.remainingTtl(key);
  }

  /**
   * Deletes the lock whoever holds it and wakes its waiters (an operator's tool); true when a
   * lock was deleted. Its holder is told through its handle's signal.
   */
  forceUnlock(key: string): Promise<boolean> {
    return this.engine.forceUnlock(key);
  }

  /** Stops granting locks, rejects waiters and waits (up to shutdownTimeout) for held locks. */
  async beforeApplicationShutdown(): Promise<void> {
    await this.engine.close(this.shutdownTimeout);
  }

  /** Releases what is still held and closes the connections the module opened. */
  async onApplicationShutdown(): Promise<void> {
    await this.engine.close();
    await this.store.close();
    this.lost.complete();
  }

  private logConnectionErrors(
    connection: { on(event: 'error', listener: (error: Error) => void): unknown },
    role: string,
  ): void {
    let lastLogged = 0;
    connection.on('error', (error: Error) => {
      const time = Date.now();
      if (time - lastLogged < CONNECTION_ERROR_LOG_INTERVAL) return;
      lastLogged = time;
      this.logger.warn(`Redis ${role} connection error: ${error.message}`);
    });
  }
}
