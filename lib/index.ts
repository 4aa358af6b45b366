export type { LockLostPolicy, RunOptions } from './engine/lock-engine';
export type { LockHandle } from './engine/lock-handle';
export type { LockOptions } from './engine/lock-options';
export {
  LockAcquireTimeoutError,
  LockError,
  LockKeyError,
  LockLostError,
  LockNotHeldError,
  LockOptionsError,
  LockRedisError,
} from './lock.errors';
export { LockService } from './lock.service';
export { Locked, type LockedOptions } from './locked.decorator';
export { RedisLockModule } from './redis-lock.module';
export { REDIS_LOCK_MODULE_OPTIONS } from './redis-lock.module-definition';
export type {
  RedisLockModuleAsyncOptions,
  RedisLockModuleOptions,
} from './redis-lock-options.interface';
