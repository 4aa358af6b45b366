import {
  booleanCheck,
  keyPrefixCheck,
  leaseTimeCheck,
  lostPolicyCheck,
  maxHoldCheck,
  millisecondsCheck,
  syncReplicasCheck,
  waitTimeCheck,
} from './checks';
import type { LockLostPolicy } from './lost-policy';
import { optionDefaults, type OptionTableOf, type ResolvedOptions } from './option-table';

/** The engine-wide settings a LockEngine takes (the module's options of the same names). */
export interface EngineOptions {
  /** Prepended to every lock key. */
  keyPrefix?: string;
  /** Watchdog lease, ms, renewed every third of it while the owner runs. */
  leaseTime?: number;
  /** Default wait of acquire, run and `@Locked`, ms (Infinity: forever). */
  waitTime?: number;
  /** Issue fencing tokens unless a call says otherwise. */
  fencing?: boolean;
  /** Replicas that must acknowledge a grant unless a call says otherwise (0: none). */
  syncReplicas?: number;
  /** Default policy of run() for a lost lock. */
  onLockLost?: LockLostPolicy;
  /** How long a fair lock's waiter keeps its place past its turn without coming back, ms. */
  fairQueueTimeout?: number;
  /** Age of a hold (ms) past which the watchdog stops renewing it, unless a call says otherwise. */
  maxHold?: number;
}

/**
 * The engine's option table: every engine-wide setting, its check and its default (the one
 * place these defaults are written; the module's table includes this one).
 *
 * `fairQueueTimeout`: a waiter that died keeps later ones waiting this long past its turn at
 * most. Redisson's 5 minutes suit threads that retry at once; here a live waiter comes back
 * within ms of its turn (notice, or its wait timer), so 5 s spares a queue behind a crashed
 * process minutes of standstill while a live but slow waiter (an event loop stalled by GC)
 * still keeps its place.
 */
export const ENGINE_OPTIONS = {
  keyPrefix: { check: keyPrefixCheck, default: '' },
  /** Redisson's lockWatchdogTimeout. */
  leaseTime: { check: leaseTimeCheck, default: 30_000 },
  waitTime: { check: waitTimeCheck, default: 10_000 },
  fencing: { check: booleanCheck, default: false },
  onLockLost: { check: lostPolicyCheck, default: 'throw' },
  syncReplicas: { check: syncReplicasCheck, default: 0 },
  fairQueueTimeout: { check: millisecondsCheck(100, 600_000), default: 5_000 },
  maxHold: { check: maxHoldCheck, default: Infinity },
} as const satisfies OptionTableOf<EngineOptions>;

/** The engine-wide settings, checked, defaults filled in. */
export type ResolvedEngineOptions = ResolvedOptions<typeof ENGINE_OPTIONS>;

/** The engine-wide defaults. */
export const ENGINE_DEFAULTS = optionDefaults(ENGINE_OPTIONS);
