import { Module, type DynamicModule } from '@nestjs/common';
import { APP_FILTER, APP_INTERCEPTOR } from '@nestjs/core';
import { ChainScopeInterceptor } from './chain-scope.interceptor';
import { MemoryLockStore } from '../stores/memory';
import { LockExceptionFilter } from './errors/lock-exception.filter';
import { LOCK_PROVIDERS } from './lock-providers';
import { LOCK_ENGINE, LOCK_STORE, RESOLVED_LOCK_OPTIONS } from './lock-tokens';
import { LockService } from './lock.service';
import { LockInspector } from '../inspector';
import {
  RedisLockConfigurableModule,
  type REDIS_LOCK_ASYNC_OPTIONS_TYPE,
  type REDIS_LOCK_OPTIONS_TYPE,
} from './redis-lock.module-definition';
import type { RedisLockModuleOptions } from './options/redis-lock-options.interface';
import {
  assertExtras,
  assertOptionsObject,
  TESTING_DEFAULTS,
  type ModuleExtras,
} from './options/redis-lock-options.validation';

/** Options of `RedisLockModule.forTesting`: the module's, less `redis` and `client`. */
export type RedisLockTestingOptions = Omit<RedisLockModuleOptions, 'redis' | 'client'> &
  ModuleExtras;

/**
 * Distributed locks on Redis for Nest: `RedisLockModule.forRoot({ redis: 'redis://…' })` or
 * `forRootAsync({ imports, inject, useFactory })` provides LockService and enables `@Locked`.
 * Global unless `isGlobal: false`; maps busy locks to 409 (see LockExceptionFilter) unless
 * `mapErrors: false`. Each handled call runs in a scope that tells a request waiting for its own
 * `acquire()` handle (see ChainScopeInterceptor). Exports LockService, LockInspector and the tokens
 * RESOLVED_LOCK_OPTIONS, LOCK_STORE and LOCK_ENGINE.
 */
@Module({
  providers: [...LOCK_PROVIDERS, { provide: APP_INTERCEPTOR, useClass: ChainScopeInterceptor }],
  exports: [LockService, LockInspector, RESOLVED_LOCK_OPTIONS, LOCK_STORE, LOCK_ENGINE],
})
export class RedisLockModule extends RedisLockConfigurableModule {
  /** The module with these options; a missing or non-object argument fails here, by name. */
  static forRoot(options: typeof REDIS_LOCK_OPTIONS_TYPE): DynamicModule {
    assertOptionsObject(options);
    assertExtras(options);
    return withErrorMapping(super.forRoot(options), options.mapErrors);
  }

  /** The module with options from a factory, class or existing provider. */
  static forRootAsync(options: typeof REDIS_LOCK_ASYNC_OPTIONS_TYPE): DynamicModule {
    assertExtras(options);
    return withErrorMapping(super.forRootAsync(options), options.mapErrors);
  }

  /**
   * The module for tests: locks in memory (no Redis), global, with short defaults (`waitTime`
   * 1 000 ms, `shutdownTimeout` 0). Each call gets its own MemoryLockStore unless `store` names
   * one: give several apps the same `new MemoryLockStore()` to test exclusion between them,
   * or any LockStore of your own (a wrapper of one, a double).
   */
  static forTesting(options: RedisLockTestingOptions = {}): DynamicModule {
    assertOptionsObject(options);
    assertExtras(options);
    return withErrorMapping(
      super.forRoot({ store: new MemoryLockStore(), ...TESTING_DEFAULTS, ...options }),
      options.mapErrors,
    );
  }
}

function withErrorMapping(module: DynamicModule, mapErrors: boolean | undefined): DynamicModule {
  if (mapErrors === false) return module;
  return {
    ...module,
    providers: [
      ...(module.providers ?? []),
      { provide: APP_FILTER, useClass: LockExceptionFilter },
    ],
  };
}
