import { LockOptionsError, messageOf } from '../errors';
import { now } from '../time/clock';
import { boundedRelease, type ReleaseDriver } from './bounded-release';
import type { LockHold } from './lock-hold';
import type { LockHolds } from './lock-holds';
import type { LockObserver } from './lock-observer';
import { PLAIN_KIND } from './kinds';
import { requirePort, type KeptReleasePort, type LockStore, type LockTarget } from '../store';

/** What a kept release needs from the engine. */
export interface KeptReleaseDriver extends ReleaseDriver {
  readonly observer: LockObserver | undefined;
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
    const port = this.store as LockStore & KeptReleasePort; // check() made sure
    return boundedRelease<boolean>(hold, this.driver, {
      send: (answered, failed) => {
        this.holds.remove(hold);
        port.releaseKept(hold, keep).then(answered, failed);
      },
      freed: (held) => {
        // Busy for others until the period ends: a busy caller's retryAfter counts it.
        if (held) this.driver.observer?.released(hold.key, now() - hold.sentAt + keep);
        return held;
      },
      failed: (error) =>
        this.driver.logger.warn(
          `Releasing lock "${hold.key}" (kept for holdAtLeast) failed (${messageOf(error)}); it expires within ${hold.leaseTime} ms.`,
        ),
    });
  }
}
