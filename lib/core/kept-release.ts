import { LockLostError, LockOptionsError, messageOf } from '../errors';
import { now } from '../time/clock';
import { FINAL_RELEASE_TIMEOUT } from './hold-calls';
import type { LockHold } from './lock-hold';
import type { LockHolds } from './lock-holds';
import type { LockObserver } from './lock-observer';
import { PLAIN_KIND } from './kinds';
import { requirePort, type KeptReleasePort, type LockStore, type LockTarget } from '../store';

/** What a kept release needs from the engine. */
export interface KeptReleaseDriver {
  readonly logger: { warn(message: string): void };
  readonly observer: LockObserver | undefined;
  /** Reports a loss found by a release. */
  report(error: LockLostError): void;
}

/**
 * How long a hold must still be kept when its owner releases it (`holdAtLeast` from its grant):
 * ms, 0 when it is released as usual.
 */
export function keepFor(hold: LockHold): number {
  if (hold.holdAtLeast === 0) return 0;
  return Math.max(0, Math.ceil(hold.grantedAt + hold.holdAtLeast - now()));
}

/**
 * The releases of holds taken with `holdAtLeast` and released before it passed: one store call
 * (KeptReleasePort) keeps the lock held, unrenewed, until the end of the period; nobody is told,
 * so waiters are not woken early. As a release, it is bounded in time and reports a loss it
 * finds.
 */
export class KeptReleases {
  constructor(
    private readonly store: LockStore,
    private readonly holds: LockHolds,
    private readonly driver: KeptReleaseDriver,
  ) {}

  /**
   * Refuses, before any acquire, a call with `holdAtLeast` on a target it cannot apply to: a
   * group of locks (LockOptionsError), or a store without the port (LockError).
   */
  check(target: LockTarget): void {
    if (target.kind !== PLAIN_KIND.id) {
      throw new LockOptionsError(
        'holdAtLeast',
        'plain locks only: a multi-lock (a list of keys) is released at once.',
      );
    }
    requirePort(this.store, 'keptRelease');
  }

  /** Ends `hold`'s use, keeping the lock `keep` ms more; rejects with LockLostError when lost. */
  release(hold: LockHold, keep: number): Promise<void> {
    const lost = hold.lostError;
    if (hold.released) return lost ? Promise.reject(lost) : Promise.resolve();
    hold.released = true;
    this.holds.remove(hold);
    const port = this.store as LockStore & KeptReleasePort; // check() made sure
    return new Promise<void>((resolve, reject) => {
      let timedOut = false;
      let timer: NodeJS.Timeout | undefined = undefined;
      const answered = (held: boolean) => {
        clearTimeout(timer);
        if (timedOut) return;
        if (lost) return reject(lost);
        if (held) {
          // Busy for others until the period ends: a busy caller's retryAfter counts it.
          this.driver.observer?.released(hold.key, now() - hold.sentAt + keep);
          hold.trace?.released();
          return resolve();
        }
        const error = new LockLostError(hold.key, 'it had expired or been deleted before release');
        hold.trace?.lost(error);
        this.driver.report(error);
        reject(error);
      };
      const failed = (error: unknown) => {
        clearTimeout(timer);
        if (timedOut) return;
        hold.trace?.released(error);
        this.driver.logger.warn(
          `Releasing lock "${hold.key}" (kept for holdAtLeast) failed (${messageOf(error)}); it expires within ${hold.leaseTime} ms.`,
        );
        if (lost) reject(lost);
        else resolve();
      };
      port.releaseKept(hold, keep).then(answered, failed);
      const limit = lost
        ? FINAL_RELEASE_TIMEOUT
        : Math.max(hold.validUntil - now(), FINAL_RELEASE_TIMEOUT);
      timer = setTimeout(() => {
        timedOut = true;
        if (lost) return reject(lost);
        hold.trace?.released(new Error(`no answer within ${limit} ms`));
        this.driver.logger.warn(
          `Releasing lock "${hold.key}" got no answer; it expires on its own.`,
        );
        resolve();
      }, limit);
      timer.unref();
    });
  }
}
