import { Module, type DynamicModule } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { LockService } from './lock.service';
import { LockedInstancesBinder } from './locked-instances.binder';
import {
  RedisLockConfigurableModule,
  type REDIS_LOCK_OPTIONS_TYPE,
} from './redis-lock.module-definition';
import { assertOptionsObject } from './redis-lock-options.validation';

/**
 * Distributed locks on Redis for Nest: `RedisLockModule.forRoot({ redis: 'redis://…' })` or
 * `forRootAsync({ imports, inject, useFactory })` provides LockService and enables `@Locked`.
 * Global unless `isGlobal: false`.
 */
@Module({
  imports: [DiscoveryModule],
  providers: [LockService, LockedInstancesBinder],
  exports: [LockService],
})
export class RedisLockModule extends RedisLockConfigurableModule {
  /** The module with these options; a missing or non-object argument fails here, by name. */
  static forRoot(options: typeof REDIS_LOCK_OPTIONS_TYPE): DynamicModule {
    assertOptionsObject(options);
    return super.forRoot(options);
  }
}
