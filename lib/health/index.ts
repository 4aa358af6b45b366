export { RedisLockHealthIndicator, type RedisLockHealthOptions } from './redis-lock.health';
