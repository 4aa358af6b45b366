import { LockLostError } from '../errors';
import { now } from '../time/clock';
import type { LockHold } from './lock-hold';

/** How long a release after a known loss, or at shutdown, waits for the store, ms. */
export const FINAL_RELEASE_TIMEOUT = 500;

/** What a release tells the engine. */
export interface ReleaseDriver {
  readonly logger: { warn(message: string): void };
  /** Reports a loss found by a release. */
  report(error: LockLostError): void;
}

/** One release's store call and what its reply means. */
export interface ReleaseCall<Reply> {
  /** Sends the store call; its reply goes to `answered`, its failure to `failed`. */
  send(answered: (reply: Reply) => void, failed: (error: unknown) => void): void;
  /** Whether the reply freed (or kept) the lock; does what follows a release. False: lost. */
  freed(reply: Reply): boolean;
  /** A failed call: logs what becomes of the lock (it expires on its own). */
  failed(error: unknown): void;
}

/**
 * Ends `hold`'s use with one store call, bounded in time: resolves when released, rejects with
 * the hold's loss when it had been lost (before or as found by the call, which reports it). A
 * failed or unanswered call resolves: the lock expires within its lease. After a known loss, or
 * with the lease already over, it waits FINAL_RELEASE_TIMEOUT at most.
 */
export function boundedRelease<Reply>(
  hold: LockHold,
  driver: ReleaseDriver,
  call: ReleaseCall<Reply>,
): Promise<void> {
  const lost = hold.lostError;
  if (hold.released) return lost ? Promise.reject(lost) : Promise.resolve();
  hold.released = true;
  return new Promise<void>((resolve, reject) => {
    let timedOut = false;
    let timer: NodeJS.Timeout | undefined = undefined;
    const answered = (reply: Reply) => {
      clearTimeout(timer);
      if (timedOut) return;
      if (lost) return reject(lost);
      if (call.freed(reply)) {
        hold.trace?.released();
        return resolve();
      }
      const error = new LockLostError(hold.key, 'it had expired or been deleted before release');
      hold.trace?.lost(error);
      driver.report(error);
      reject(error);
    };
    const failed = (error: unknown) => {
      clearTimeout(timer);
      if (timedOut) return;
      hold.trace?.released(error);
      call.failed(error);
      if (lost) reject(lost);
      else resolve();
    };
    // As for an attempt, the request goes first: the rest overlaps its round trip.
    call.send(answered, failed);
    const limit = lost
      ? FINAL_RELEASE_TIMEOUT
      : Math.max(hold.validUntil - now(), FINAL_RELEASE_TIMEOUT);
    timer = setTimeout(() => {
      timedOut = true;
      if (lost) return reject(lost);
      hold.trace?.released(new Error(`no answer within ${limit} ms`));
      driver.logger.warn(`Releasing lock "${hold.key}" got no answer; it expires on its own.`);
      resolve();
    }, limit);
    timer.unref();
  });
}
