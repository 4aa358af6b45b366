import { Logger, type Provider } from '@nestjs/common';
import { ENGINE_OPTIONS, LockEngine, pickOptions } from '../core';
import { LockError } from '../errors';
import { LockInspector } from '../inspector';
import type { LockStore } from '../store';
import { RedisStore } from '../stores/redis';
import { Leaders } from './leadership/leaders';
import { LockLifecycle } from './lock-lifecycle';
import { LOCK_ENGINE, LOCK_STORE, RESOLVED_LOCK_OPTIONS } from './lock-tokens';
import { LockService } from './lock.service';
import { LockEvents } from './observability/lock-events';
import { LockSpans } from './observability/lock-spans';
import { openStore } from './open-store';
import { isUserStore } from './options/connection-source.validation';
import {
  resolveModuleOptions,
  type ResolvedModuleOptions,
} from './options/redis-lock-options.validation';
import { LOGGER_CONTEXT } from './redis-lock.constants';
import { REDIS_LOCK_MODULE_OPTIONS } from './redis-lock.module-definition';

/** The store the options name: the `store` option's own LockStore, else one openStore opens. */
function storeFactory(options: ResolvedModuleOptions): LockStore {
  if (isUserStore(options.store)) return options.store;
  const logger = new Logger(LOGGER_CONTEXT);
  return openStore({ ...options, store: options.store }, (message) => logger.warn(message));
}

/** The engine on the store, with the options' engine-wide settings. */
function engineFactory(
  options: ResolvedModuleOptions,
  store: LockStore,
  events: LockEvents,
): LockEngine {
  return new LockEngine({
    ...pickOptions(ENGINE_OPTIONS, options),
    store,
    logger: new Logger(LOGGER_CONTEXT),
    observer: events,
    tracer: options.tracing ? LockSpans.create(options.exposeKeys) : undefined,
  });
}

/**
 * The inspector on the module's Redis connection; with another store (memory, a store of the
 * user's) one whose methods reject, saying why.
 */
function inspectorFactory(options: ResolvedModuleOptions, store: LockStore): LockInspector {
  if (store instanceof RedisStore) return new LockInspector(store.redisClient, options.keyPrefix);
  return new LockInspector(
    new LockError(
      'LockInspector reads Redis: this module keeps its locks in another store (the store option).',
    ),
    options.keyPrefix,
  );
}

/**
 * The module's providers, each built by a factory from the one before: the resolved options
 * (checked once, at boot), the events, the store, the engine, the leadership campaigns on it;
 * the inspector on the store's connection; LockService on the engine, and the lifecycle (connect at startup, campaign after bootstrap,
 * close at shutdown).
 */
export const LOCK_PROVIDERS: Provider[] = [
  {
    provide: RESOLVED_LOCK_OPTIONS,
    useFactory: resolveModuleOptions,
    inject: [REDIS_LOCK_MODULE_OPTIONS],
  },
  {
    provide: LockEvents,
    useFactory: (options: ResolvedModuleOptions) => new LockEvents(options.exposeKeys),
    inject: [RESOLVED_LOCK_OPTIONS],
  },
  { provide: LOCK_STORE, useFactory: storeFactory, inject: [RESOLVED_LOCK_OPTIONS] },
  {
    provide: LOCK_ENGINE,
    useFactory: engineFactory,
    inject: [RESOLVED_LOCK_OPTIONS, LOCK_STORE, LockEvents],
  },
  {
    provide: Leaders,
    useFactory: (engine: LockEngine) => new Leaders(engine),
    inject: [LOCK_ENGINE],
  },
  {
    provide: LockInspector,
    useFactory: inspectorFactory,
    inject: [RESOLVED_LOCK_OPTIONS, LOCK_STORE],
  },
  LockService,
  LockLifecycle,
];
