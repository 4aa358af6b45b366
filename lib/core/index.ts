/** The core's front door: what the Nest layer and the package's index use of the lock engine. */
export { LockEngine } from './lock-engine';
export type { LockEngineConfig } from './lock-engine-config';
export type { LockHandle, PermitHandle } from './lock-handle';
export type { LockObserver } from './lock-observer';
export type { HoldTrace, LockTracer, TracedKind, TracedWait, WaitTrace } from './lock-tracer';
export {
  LeaderCampaign,
  type LeaderChange,
  type LeaderListener,
} from './leadership/leader-campaign';
export {
  checkLeaderOptions,
  type CheckedLeaderOptions,
  type LeaderOptions,
} from './leadership/leader-options';
export type { PermitOptions, PermitRunOptions, RedisSemaphore } from './semaphore';
export { assertPermits, MAX_GROUP_KEYS, type LockKeys, type LockMode } from './targets';
export { ChainHandles } from './ownership/chain-handles';
export {
  checkLockOptions,
  LOCK_OPTIONS,
  PERMIT_RUN_OPTIONS,
  RUN_OPTIONS,
  type BusyPolicy,
  type CheckedRunOptions,
  type LockLostPolicy,
  type LockOptions,
  type RunOptions,
} from './options/lock-options';
export { ENGINE_OPTIONS, type ResolvedEngineOptions } from './options/engine-options';
export * from './options/checks';
export * from './options/option-table';
export {
  assertBoolean,
  assertKnownOptions,
  assertLeaseTime,
  assertOneOf,
  assertWaitTime,
  describe,
  hashTagMessage,
  hashTagProblem,
  lockName,
  MAX_KEY_BYTES,
} from './options/validate';
