import {
  Inject,
  Injectable,
  Logger,
  type BeforeApplicationShutdown,
  type OnApplicationShutdown,
} from '@nestjs/common';
import { Subject, type Observable } from 'rxjs';
import { LockEngine, type RunOptions } from './engine/lock-engine';
import type { LockHandle } from './engine/lock-handle';
import type { LockOptions } from './engine/lock-options';
import { openConnections, type RedisConnections } from './engine/redis-connections';
import type { LockLostError } from './lock.errors';
import { LOGGER_CONTEXT } from './redis-lock.constants';
import { REDIS_LOCK_MODULE_OPTIONS } from './redis-lock.module-definition';
import type { RedisLockModuleOptions } from './redis-lock-options.interface';
import { resolveModuleOptions } from './redis-lock-options.validation';

/** Quiet period between two logged connection errors of one connection, ms. */
const CONNECTION_ERROR_LOG_INTERVAL = 5_000;

/**
 * Distributed, reentrant locks on Redis. Injected wherever RedisLockModule is imported (it is
 * global by default). Ownership follows the async call chain: a chain that holds a lock may
 * take it again at no cost; any other chain, here or in another process, waits.
 */
@Injectable()
export class LockService implements BeforeApplicationShutdown, OnApplicationShutdown {
  /** Emits a LockLostError for every lock lost while held (also logged once). */
  readonly lockLost$: Observable<LockLostError>;
  private readonly logger = new Logger(LOGGER_CONTEXT);
  private readonly lost = new Subject<LockLostError>();
  private readonly connections: RedisConnections;
  private readonly engine: LockEngine;
  private readonly shutdownTimeout: number;

  constructor(@Inject(REDIS_LOCK_MODULE_OPTIONS) options: RedisLockModuleOptions) {
    const resolved = resolveModuleOptions(options);
    this.shutdownTimeout = resolved.shutdownTimeout;
    this.lockLost$ = this.lost.asObservable();
    this.connections = openConnections(resolved);
    this.logConnectionErrors(this.connections.subscriber, 'pub/sub');
    if (!resolved.client) this.logConnectionErrors(this.connections.client, 'command');
    this.engine = new LockEngine({
      client: this.connections.client,
      subscriber: this.connections.subscriber,
      keyPrefix: resolved.keyPrefix,
      leaseTime: resolved.leaseTime,
      waitTime: resolved.waitTime,
      fencing: resolved.fencing,
      onLockLost: resolved.onLockLost,
      logger: this.logger,
      onLost: (error) => this.lost.next(error),
    });
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
   * the programmatic twin of `@Locked`.
   */
  run<T>(key: string, fn: (lock: LockHandle) => T | Promise<T>, options?: RunOptions): Promise<T> {
    return this.engine.run(key, fn, options);
  }

  /**
   * Runs `fn` as the owner of a handle from `acquire`/`tryAcquire`, so locked calls inside it
   * re-enter instead of waiting for the handle's own lock.
   */
  runAs<T>(lock: LockHandle, fn: () => T): T {
    return this.engine.runAs(lock, fn);
  }

  /** The handle the current call chain holds: the innermost one, or the one for `key`. */
  current(key?: string): LockHandle | undefined {
    return this.engine.current(key);
  }

  /** Whether anyone (any process or Redisson client) holds `key` now. */
  isLocked(key: string): Promise<boolean> {
    return this.engine.isLocked(key);
  }

  /** Whether the current call chain holds `key`. */
  isHeldByCurrentContext(key: string): boolean {
    return this.engine.isHeldByCurrentContext(key);
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
    await this.connections.close();
    this.lost.complete();
  }

  private logConnectionErrors(connection: RedisConnections['client'], role: string): void {
    let lastLogged = 0;
    connection.on('error', (error: Error) => {
      const now = Date.now();
      if (now - lastLogged < CONNECTION_ERROR_LOG_INTERVAL) return;
      lastLogged = now;
      this.logger.warn(`Redis ${role} connection error: ${error.message}`);
    });
  }
}
