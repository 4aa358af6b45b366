import { LockLostError } from '../lock.errors';
import type { HoldKind, LockTarget, StoredHold } from './store/lock-store';

/**
 * One acquisition in the store by this process (a lock, a read or write hold, a group, a permit):
 * what the watchdog and release need.
 */
export class LockHold implements StoredHold {
  /** Created on first use: most holds are released without anyone reading their signal. */
  private controller: AbortController | undefined;
  /** Set once the release has started; the hold can no longer be lost after that. */
  released = false;
  /** Monotonic time (ms, see clock.ts) until which the lease is known to be in force. */
  validUntil: number;
  /** The expiry timer of a hold with an explicit lease. */
  expiryTimer: NodeJS.Timeout | undefined;
  /** Replicas whose acknowledgement its release waits for (best effort). */
  syncReplicas = 0;
  /** Of a kind others may hold at once too (a read hold, a permit): a waiter's turn passes on. */
  shared = false;

  readonly kind: HoldKind;
  /** The key as the user gave it (a group's keys joined with ', '). */
  readonly key: string;
  /** The store's name (keyPrefix + key; a group's first member). */
  readonly name: string;
  /** `multi`: every member's store name. */
  readonly names: readonly string[] | undefined;
  /** `permit`: the limit the permit was taken under. */
  readonly permits: number | undefined;

  constructor(
    target: LockTarget,
    /** The owner id: `<client uuid>:<sequence number>`. */
    readonly owner: string,
    /** The lease in ms. */
    readonly leaseTime: number,
    /** Whether the watchdog renews the lease (no explicit lease was given). */
    readonly watchdog: boolean,
    /** The fencing token of this acquisition, if issued. */
    readonly fencingToken: number | undefined,
    /** Monotonic time at which the acquire request was sent. */
    readonly sentAt: number,
  ) {
    this.kind = target.kind;
    this.key = target.key;
    this.name = target.name;
    this.names = target.names;
    this.permits = target.permits;
    this.validUntil = sentAt + leaseTime;
  }

  /** Aborted with a LockLostError when the hold is lost. */
  get signal(): AbortSignal {
    this.controller ??= new AbortController();
    return this.controller.signal;
  }

  /** The LockLostError, once lost. */
  get lostError(): LockLostError | undefined {
    return this.controller?.signal.aborted
      ? (this.controller.signal.reason as LockLostError)
      : undefined;
  }

  /** Marks the hold lost (aborting its signal); false when it was already lost or released. */
  lose(reason: string): boolean {
    if (this.released || this.lostError) return false;
    this.controller ??= new AbortController();
    this.controller.abort(new LockLostError(this.key, reason));
    return true;
  }
}
