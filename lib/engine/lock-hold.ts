import { LockLostError } from '../lock.errors';

/** One acquisition of a lock in Redis by this process: what the watchdog and release need. */
export class LockHold {
  /** Created on first use: most holds are released without anyone reading their signal. */
  private controller: AbortController | undefined;
  /** Set once the release has started; the hold can no longer be lost after that. */
  released = false;
  /** Local time (ms) until which the lease is known to be in force. */
  validUntil: number;
  /** The expiry timer of a hold with an explicit lease. */
  expiryTimer: NodeJS.Timeout | undefined;

  constructor(
    /** The lock key as the user gave it. */
    readonly key: string,
    /** The Redis key of the lock hash (keyPrefix + key). */
    readonly name: string,
    /** The release channel. */
    readonly channel: string,
    /** The owner field: `<client uuid>:<owner id>`. */
    readonly field: string,
    /** The lease in ms. */
    readonly leaseTime: number,
    /** Whether the watchdog renews the lease (no explicit lease was given). */
    readonly watchdog: boolean,
    /** The fencing token of this acquisition, if issued. */
    readonly fencingToken: number | undefined,
    /** Local time at which the acquire request was sent. */
    sentAt: number,
  ) {
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

  /** Marks the hold lost; returns false when it was already lost or released. */
  lose(reason: string): boolean {
    if (this.released || this.lostError) return false;
    this.controller ??= new AbortController();
    this.controller.abort(new LockLostError(this.key, reason));
    return true;
  }
}
