export { RedisLockHealthModule } from './redis-lock-health.module';
export { RedisLockHealthIndicator, type RedisLockHealthOptions } from './redis-lock.health';
