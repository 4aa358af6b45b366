import { LockLostError } from '../errors';
import { now } from '../time/clock';
import { checkedOnRead } from '../time/deadline-signal';
import type { HoldKind, LockTarget, StoredHold } from '../store';
import { kindOf } from './kinds';
import type { HoldTrace } from './lock-tracer';

/** Who keeps a hold (LockHolds): told when a read finds its lease deadline passed. */
export interface HoldKeeper {
  /** `hold`'s deadline passed unnoticed: lose it now (see LockHold.checkDeadline). */
  expired(hold: LockHold): void;
}

/**
 * One acquisition in the store by this process (a lock, a read or write hold, a group, a permit):
 * what the watchdog and release need.
 */
export class LockHold implements StoredHold {
  /** Created on first use: most holds are released without anyone reading their signal. */
  private controller: AbortController | undefined;
  private lost: LockLostError | undefined;
  /** Set once the release has started; the hold can no longer be lost after that. */
  released = false;
  /** Monotonic time (ms, see clock.ts) until which the lease is known to be in force. */
  validUntil: number;
  /** The expiry timer of a hold with an explicit lease. */
  expiryTimer: NodeJS.Timeout | undefined;
  /** Set while it is kept (held and renewed or timed); told of a deadline found passed. */
  keeper: HoldKeeper | undefined;
  /** Replicas whose acknowledgement its release waits for (best effort). */
  syncReplicas = 0;
  /** Ms from `grantedAt` the lock stays held however early it is released (0: none). */
  holdAtLeast = 0;
  /** Age (ms from `sentAt`) past which the watchdog no longer renews it. */
  maxHold = Infinity;
  /** Monotonic time at which the grant was read (the lock was taken before). */
  grantedAt: number;
  /** The hold's trace (LockTracer), ended by its release or its loss; unset when untraced. */
  trace: HoldTrace | undefined = undefined;

  readonly kind: HoldKind;
  /** Of a kind others may hold at once too (a read hold, a permit): a waiter's turn passes on. */
  readonly shared: boolean;
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
    this.shared = kindOf(target.kind).shared;
    this.key = target.key;
    this.name = target.name;
    this.names = target.names;
    this.permits = target.permits;
    this.validUntil = sentAt + leaseTime;
    this.grantedAt = sentAt;
  }

  /**
   * Aborted with a LockLostError when the hold is lost; reading it (`aborted`, `reason`,
   * `throwIfAborted()`) after the lease deadline passed unrenewed finds it aborted (see
   * checkDeadline).
   */
  get signal(): AbortSignal {
    return (this.controller ??= this.newController()).signal;
  }

  /** The LockLostError, once lost (checked against the lease deadline first). */
  get lostError(): LockLostError | undefined {
    this.checkDeadline();
    return this.lost;
  }

  /**
   * Until when (clock ms) a grant may be handed to its caller: while two thirds of the lease,
   * measured from when the request was sent, have not passed. Later, a third of the lease (the
   * watchdog's renewal period) is not left for a renewal or the caller's first step to land.
   */
  get handOverBy(): number {
    return this.sentAt + this.leaseTime - this.leaseTime / 3;
  }

  /**
   * Loses a kept hold whose lease deadline (validUntil) has passed. The watchdog's and the
   * explicit lease's timers find it too, but after a stalled event loop the holder's code runs
   * before any timer: every read of the signal or the loss checks first.
   */
  checkDeadline(): void {
    const keeper = this.keeper;
    if (keeper && this.lost === undefined && !this.released && now() >= this.validUntil) {
      keeper.expired(this);
    }
  }

  /** Marks the hold lost (aborting its signal); false when it was already lost or released. */
  lose(reason: string): boolean {
    if (this.released || this.lost !== undefined) return false;
    this.lost = new LockLostError(this.key, reason);
    (this.controller ??= this.newController()).abort(this.lost);
    return true;
  }

  private newController(): AbortController {
    const controller = new AbortController();
    checkedOnRead(controller.signal, () => this.checkDeadline());
    return controller;
  }
}
