import { LockEngine } from '../../lib/core/lock-engine';
import type { LockEngineConfig } from '../../lib/core/lock-engine-config';
import type { LockObserver } from '../../lib/core/lock-observer';
import type { LockStore } from '../../lib/store';

const noop = () => undefined;

/** A promise settled from outside. */
export class Deferred<T = void> {
  resolve!: (value: T) => void;
  reject!: (reason: unknown) => void;
  readonly promise = new Promise<T>((resolve, reject) => {
    this.resolve = resolve;
    this.reject = reject;
  });
}

/** A logger that drops everything. */
export const quietLogger = { warn: noop, debug: noop };

/**
 * The engine settings the core tests share (all but the store): prefix `p:`, a 30 s lease, a
 * 10 s wait, no fencing, no replica sync, `onLockLost: 'throw'`, a quiet logger, no observer.
 */
export const TEST_ENGINE_CONFIG: Omit<LockEngineConfig, 'store'> = {
  keyPrefix: 'p:',
  leaseTime: 30_000,
  waitTime: 10_000,
  fencing: false,
  syncReplicas: 0,
  onLockLost: 'throw',
  fairQueueTimeout: 5_000,
  maxHold: Infinity,
  logger: quietLogger,
};

/** A LockEngine on `store` with TEST_ENGINE_CONFIG, but for what `config` says. */
export function testEngine(store: LockStore, config: Partial<LockEngineConfig> = {}): LockEngine {
  return new LockEngine({ ...TEST_ENGINE_CONFIG, store, ...config });
}

/** An observer that ignores everything but what `heard` handles. */
export function observerOf(heard: Partial<LockObserver>): LockObserver {
  return { acquired: noop, busy: noop, released: noop, renewalFailed: noop, lost: noop, ...heard };
}
