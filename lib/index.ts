export type { LockHandle, PermitHandle } from './engine/lock-handle';
export type { PermitOptions, PermitRunOptions, RedisSemaphore } from './engine/semaphore';
export type { LockKeys, LockMode } from './engine/targets';
export type {
  BusyPolicy,
  LockLostPolicy,
  LockOptions,
  RunOptions,
} from './engine/options/lock-options';
export {
  LockAcquireTimeoutError,
  LockError,
  LockKeyError,
  LockLostError,
  LockNotHeldError,
  LockOptionsError,
  LockRedisError,
  LockSelfDeadlockError,
  LockUpgradeError,
} from './lock.errors';
export type { BusyStatus } from './lock-error-answer';
export type { RedisErrorStatus } from './redis-error-answer';
export { LockExceptionFilter } from './lock-exception.filter';
export type { LockEvent } from './lock-events';
export { METER_NAME } from './lock-metrics';
export { LockService } from './lock.service';
export { Locked, type LockedOptions } from './locked.decorator';
export { Semaphore, type SemaphoreOptions } from './semaphore.decorator';
export { MemoryLockStore } from './engine/memory/memory-store';
export { RedisLockModule, type RedisLockTestingOptions } from './redis-lock.module';
export {
  REDIS_LOCK_MODULE_OPTIONS,
  type RedisLockModuleAsyncOptions,
} from './redis-lock.module-definition';
export type { RedisLockModuleOptions } from './redis-lock-options.interface';
export type { ClusterConfig } from './engine/redis/redis-connections';
