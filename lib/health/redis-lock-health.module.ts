import { Module } from '@nestjs/common';
import { TerminusModule } from '@nestjs/terminus';
import { RedisLockHealthIndicator } from './redis-lock.health';

/**
 * Provides `RedisLockHealthIndicator` and re-exports `TerminusModule` (`HealthCheckService`):
 * import it where the health controller lives. Needs `RedisLockModule` registered globally
 * (the default) for the indicator's `LockService`.
 */
@Module({
  imports: [TerminusModule],
  providers: [RedisLockHealthIndicator],
  exports: [RedisLockHealthIndicator, TerminusModule],
})
export class RedisLockHealthModule {}
