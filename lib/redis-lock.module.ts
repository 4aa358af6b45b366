import { Module, type DynamicModule } from '@nestjs/common';
import { APP_FILTER } from '@nestjs/core';
import { LockExceptionFilter } from './lock-exception.filter';
import { LockService } from './lock.service';
import {
  RedisLockConfigurableModule,
  type REDIS_LOCK_ASYNC_OPTIONS_TYPE,
  type REDIS_LOCK_OPTIONS_TYPE,
} from './redis-lock.module-definition';
import { assertOptionsObject } from './redis-lock-options.validation';

/**
 * Distributed locks on Redis for Nest: `RedisLockModule.forRoot({ redis: 'redis://…' })` or
 * `forRootAsync({ imports, inject, useFactory })` provides LockService and enables `@Locked`.
 * Global unless `isGlobal: false`; maps busy locks to 409 (see LockExceptionFilter) unless
 * `mapErrors: false`.
 */
@Module({
  providers: [LockService],
  exports: [LockService],
})
export class RedisLockModule extends RedisLockConfigurableModule {
  /** The module with these options; a missing or non-object argument fails here, by name. */
  static forRoot(options: typeof REDIS_LOCK_OPTIONS_TYPE): DynamicModule {
    assertOptionsObject(options);
    return withErrorMapping(super.forRoot(options), options.mapErrors);
  }

  /** The module with options from a factory, class or existing provider. */
  static forRootAsync(options: typeof REDIS_LOCK_ASYNC_OPTIONS_TYPE): DynamicModule {
    return withErrorMapping(super.forRootAsync(options), options.mapErrors);
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
