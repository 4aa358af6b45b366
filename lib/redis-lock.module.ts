import { Module } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { LockService } from './lock.service';
import { LockedInstancesBinder } from './locked-instances.binder';
import { RedisLockConfigurableModule } from './redis-lock.module-definition';

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
export class RedisLockModule extends RedisLockConfigurableModule {}
