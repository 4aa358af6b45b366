import {
  Inject,
  Injectable,
  Logger,
  type BeforeApplicationShutdown,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
  type OnModuleInit,
} from '@nestjs/common';
import type { LockEngine } from '../core';
import type { LockStore } from '../store';
import { Leaders } from './leadership/leaders';
import { LOCK_ENGINE, LOCK_STORE, RESOLVED_LOCK_OPTIONS } from './lock-tokens';
import { LockEvents } from './observability/lock-events';
import { storeOpenedByModule } from './open-store';
import type { ResolvedModuleOptions } from './options/redis-lock-options.validation';
import { LOGGER_CONTEXT } from './redis-lock.constants';
import { registerClient, unregisterClient } from './registry/client-registration';

/** How long the startup check waits for Redis, ms. */
const STARTUP_CHECK_TIMEOUT = 5_000;

/**
 * The module's lifecycle: connects the store it opened at startup (as `checkOnStartup` says) and
 * registers its client in Redis (see docs/inspector.md),
 * starts the leadership campaigns once the application has started, closes them at shutdown (a
 * leader resigns) before it stops the engine, then closes that store. A store of the user's own (the `store`
 * option's LockStore, an override of LOCK_STORE) is theirs to connect and close.
 */
@Injectable()
export class LockLifecycle
  implements OnModuleInit, OnApplicationBootstrap, BeforeApplicationShutdown, OnApplicationShutdown
{
  private readonly logger = new Logger(LOGGER_CONTEXT);

  constructor(
    @Inject(RESOLVED_LOCK_OPTIONS) private readonly options: ResolvedModuleOptions,
    @Inject(LOCK_STORE) private readonly store: LockStore,
    @Inject(LOCK_ENGINE) private readonly engine: LockEngine,
    @Inject(LockEvents) private readonly events: LockEvents,
    @Inject(Leaders) private readonly leaders: Leaders,
  ) {}

  /**
   * Connects to Redis as `checkOnStartup` says: fail the bootstrap (at once when the address
   * refuses, else after STARTUP_CHECK_TIMEOUT), warn without delaying it, or not check (the
   * memory store has nothing to connect to).
   */
  async onModuleInit(): Promise<void> {
    const store = storeOpenedByModule(this.store);
    if (store === undefined) return;
    const connecting = store.connect(STARTUP_CHECK_TIMEOUT);
    const check = this.options.checkOnStartup;
    if (check !== 'fail') {
      connecting.catch((error: unknown) => {
        if (check === 'warn') {
          this.logger.warn(`${(error as Error).message} Lock calls fail until it is reachable.`);
        }
      });
      registerClient(store, this.engine, this.options); // written once Redis answers
      return;
    }
    try {
      await connecting;
    } catch (error) {
      await store.close(); // a failed bootstrap leaves no socket behind
      throw error;
    }
    registerClient(store, this.engine, this.options);
  }

  /** Starts the leadership campaigns: the application is up. */
  onApplicationBootstrap(): void {
    this.leaders.start();
  }

  /**
   * Closes the leadership campaigns (a leader resigns at once), then stops granting locks,
   * rejects waiters and waits (up to shutdownTimeout) for held locks.
   */
  async beforeApplicationShutdown(): Promise<void> {
    await this.leaders.close();
    await this.engine.close(this.options.shutdownTimeout);
  }

  /**
   * Releases what is still held, removes the client's record from the registry and closes the
   * connections the module opened.
   */
  async onApplicationShutdown(): Promise<void> {
    await this.leaders.close();
    await this.engine.close();
    const store = storeOpenedByModule(this.store);
    if (store !== undefined) await unregisterClient(store);
    await store?.close();
    this.events.complete();
  }
}
