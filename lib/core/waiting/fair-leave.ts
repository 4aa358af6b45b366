import { isConnectionError } from '../../errors';
import { now } from '../../time/clock';
import { sleep } from '../../time/time-limit';
import type { AcquireRequest, FairQueuePort } from '../../store';

/**
 * How long a waiter that gave up goes on trying to leave while the store cannot be reached, ms:
 * the 5 minutes the fair scripts keep a queue's keys past its last deadline.
 */
const LEAVE_RETRY_SPAN = 300_000;
/** The first and the longest pause between two tries, ms. */
const FIRST_RETRY_DELAY = 100;
const LONGEST_RETRY_DELAY = 1_000;

/**
 * Takes a fair waiter that gives up out of the queue. When the store cannot be reached, the
 * leave is tried again in the background (outside every call chain) until it lands, the store
 * refuses it, `stopped()` says the engine is closing, or LEAVE_RETRY_SPAN has passed. A place
 * left behind holds the queue's head until its deadline, and each one expires after the one
 * ahead: waiters that gave up during an outage would keep a free lock from the live ones behind
 * them for up to the place timeout each. A retry can only take out this acquisition's place:
 * owner ids are never reused. Never rejects.
 */
export async function leaveQueue(
  queue: FairQueuePort,
  request: AcquireRequest,
  stopped: () => boolean,
  outside: <T>(fn: () => T) => T,
): Promise<void> {
  try {
    await queue.leave(request);
  } catch (error) {
    if (isConnectionError(error)) outside(() => void retryLeave(queue, request, stopped));
  }
}

async function retryLeave(
  queue: FairQueuePort,
  request: AcquireRequest,
  stopped: () => boolean,
): Promise<void> {
  const until = now() + LEAVE_RETRY_SPAN;
  for (let delay = FIRST_RETRY_DELAY; now() < until;) {
    await sleep(delay);
    if (stopped()) return;
    try {
      await queue.leave(request);
      return;
    } catch (error) {
      if (!isConnectionError(error)) return;
    }
    delay = Math.min(delay * 2, LONGEST_RETRY_DELAY);
  }
}
