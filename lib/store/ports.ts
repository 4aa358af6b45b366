import { LockError, type LockHolder } from '../errors';
import type { AcquireReply, AcquireRequest, LockStore, LockTarget, StoredHold } from './lock-store';

/*
 * Capability ports: what only some primitives need of a store, each a small interface a store
 * may implement beside LockStore. A primitive asks for its port (hasPort, requirePort), so a new
 * one (a countdown latch, a leader lease) adds a port here and leaves LockStore's required
 * methods as they are.
 */

/** A fair lock's queue in the store: a waiter that gives up leaves it. */
export interface FairQueuePort {
  /** Takes a waiter that gives up out of the queue (the next one is told if due). */
  leave(request: AcquireRequest): Promise<void>;
}

/** A semaphore's count of free permits. */
export interface PermitCountPort {
  /** How many more permits a caller with the target's limit could take now. */
  available(target: LockTarget): Promise<number>;
}

/**
 * The fast path: acquire() and release() with their answer handed to a callback in the step
 * that reads it, never before the call returns: one promise and one microtask hop less on the
 * path every lock call takes. Without it the engine uses acquire() and release().
 */
export interface FastPathPort {
  acquireInto(
    request: AcquireRequest,
    answered: (reply: AcquireReply) => void,
    failed: (error: unknown) => void,
  ): void;
  releaseInto(
    hold: StoredHold,
    answered: (listeners: number | null) => void,
    failed: (error: unknown) => void,
  ): void;
}

/**
 * A plain lock's release that keeps it held (`holdAtLeast`): the owner is done, but the lock
 * stays in the store under its owner, unrenewed, and expires later without a release notice.
 */
export interface KeptReleasePort {
  /**
   * Sets the lease of `hold` (a plain lock) to end `keepFor` ms from now if its owner still
   * holds it, and tells nobody. Idempotent as release (a resent call gets the first answer and
   * moves nothing). Resolves true, or false when the owner did not hold it (expired or deleted).
   */
  releaseKept(hold: StoredHold, keepFor: number): Promise<boolean>;
}

/**
 * A waiter's turn passed on: a process whose turn came with a release notice, but which no
 * longer waits for the lock, announces the release again, so that the process due next does not
 * wait for a timer to learn that the turn is its.
 */
export interface TurnPassPort {
  /**
   * Publishes a release message (Redisson's unlock message) on `channel`, a lock's release
   * channel (see LockStore.channel); waiters read it as a release of a lock that may be free.
   */
  passTurn(channel: string): Promise<void>;
}

/** What a client (one LockService's engine) registers about itself: see ClientRegistryPort. */
export interface ClientInfo extends LockHolder {
  /** The client id: the uuid before the `:` of every owner field the client writes. */
  readonly id: string;
  /** The library's version. */
  readonly version: string;
  /** When the client registered, ms since the epoch. */
  readonly startedAt: number;
  /** The client's `keyPrefix`. */
  readonly keyPrefix: string;
}

/**
 * The client registry: a record of each live client in the store, so that a lock's holder can
 * be named (the inspector, a busy caller's error). Off the lock path: kept alive by a timer.
 */
export interface ClientRegistryPort {
  /**
   * Registers `info` for `ttl` ms and keeps it registered (refreshed every third of `ttl`, by an
   * unref'd timer; a failed write is retried then) until unregisterClient(). Once per store.
   */
  registerClient(info: ClientInfo, ttl: number): void;
  /** Stops refreshing and removes the record (best effort: else it expires within its ttl). */
  unregisterClient(): Promise<void>;
  /**
   * The registered client of a holder of `target` (for a group, of its first held member); undefined
   * when it is free, held by an unregistered client, or not a lock with owner fields.
   */
  holderOf(target: LockTarget): Promise<ClientInfo | undefined>;
}

/** Every port by name. */
export interface StorePorts {
  fairQueue: FairQueuePort;
  permitCount: PermitCountPort;
  fastPath: FastPathPort;
  keptRelease: KeptReleasePort;
  clientRegistry: ClientRegistryPort;
  turnPass: TurnPassPort;
}

/** The name of a port. */
export type StorePort = keyof StorePorts;

/** The method whose presence says a store has the port (a port's methods come together). */
const PROBES: { readonly [P in StorePort]: keyof StorePorts[P] } = {
  fairQueue: 'leave',
  permitCount: 'available',
  fastPath: 'acquireInto',
  keptRelease: 'releaseKept',
  clientRegistry: 'registerClient',
  turnPass: 'passTurn',
};

/** What each port serves, for the error of a store without it. */
const SERVES: { readonly [P in StorePort]: string } = {
  fairQueue: 'fair locks',
  permitCount: "a semaphore's available()",
  fastPath: 'the fast path',
  keptRelease: 'holdAtLeast',
  clientRegistry: 'the client registry',
  turnPass: 'passing a turn on',
};

/** Whether `store` has the capability port `port`. */
export function hasPort<P extends StorePort>(
  store: LockStore,
  port: P,
): store is LockStore & StorePorts[P] {
  return typeof (store as unknown as Record<string, unknown>)[PROBES[port]] === 'function';
}

/** `store` as its port `port`; a LockError naming what needs it when the store has none. */
export function requirePort<P extends StorePort>(store: LockStore, port: P): StorePorts[P] {
  if (hasPort(store, port)) return store;
  throw new LockError(`This lock store does not support ${SERVES[port]} (no ${port} port).`);
}
