export type {
  LockHandle,
  PermitHandle,
  PermitOptions,
  PermitRunOptions,
  RedisSemaphore,
  LockKeys,
  LockMode,
  BusyPolicy,
  LeaderChange,
  LeaderOptions,
  LockLostPolicy,
  LockOptions,
  RunOptions,
} from './core';
export {
  LockAcquireTimeoutError,
  LockError,
  type LockHolder,
  LockKeyError,
  LockLostError,
  LockNotHeldError,
  LockOptionsError,
  LockRedisError,
  LockSelfDeadlockError,
  LockUpgradeError,
} from './errors';
export type { BusyStatus } from './nest/errors/lock-error-answer';
export type { RedisErrorStatus } from './nest/errors/redis-error-answer';
export { LockExceptionFilter } from './nest/errors/lock-exception.filter';
export type { LockEvent } from './nest/observability/lock-events';
export { METER_NAME } from './nest/observability/lock-metrics';
export { TRACER_NAME } from './nest/observability/lock-spans';
export { LockService } from './nest/lock.service';
export {
  LockInspector,
  type ClientSummary,
  type HolderView,
  type InspectorConnectOptions,
  type ListOptions,
  type ListWaitingOptions,
  type LockDescription,
  type LockKindFound,
  type LockSummary,
  type OwnerView,
  type PermitCount,
  type QueuedView,
} from './inspector';
export { RedisLockInspectorModule, type RedisLockInspectorOptions } from './inspector-page';
export type { ClientInfo } from './store';
export { Locked, type LockedOptions } from './nest/decorators/locked.decorator';
export { Semaphore, type SemaphoreOptions } from './nest/decorators/semaphore.decorator';
export {
  ScheduledLock,
  type ScheduledLockDecorator,
  type ScheduledLockOptions,
} from './nest/decorators/scheduled-lock.decorator';
export { LeaderOnly } from './nest/decorators/leader-only.decorator';
export type { Leadership } from './nest/leadership/leadership';
export { MemoryLockStore } from './stores/memory';
export { RedisLockModule, type RedisLockTestingOptions } from './nest/redis-lock.module';
export {
  REDIS_LOCK_MODULE_OPTIONS,
  type RedisLockModuleAsyncOptions,
} from './nest/redis-lock.module-definition';
export type { RedisLockModuleOptions } from './nest/options/redis-lock-options.interface';
export type { ResolvedModuleOptions } from './nest/options/redis-lock-options.validation';
export { LOCK_ENGINE, LOCK_STORE, RESOLVED_LOCK_OPTIONS } from './nest/lock-tokens';
export type {
  AcquireReply,
  AcquireRequest,
  LockStore,
  LockTarget,
  NoticeListener,
  StoredHold,
} from './store';
export type { ClusterConfig, WrappedRedisClient } from './stores/redis';
