import { now } from '../time/clock';
import { resolvesWithin, sleep } from '../time/time-limit';
import { FINAL_RELEASE_TIMEOUT } from './bounded-release';
import type { HoldCalls } from './hold-calls';
import type { LockHolds } from './lock-holds';

/**
 * At shutdown (new acquires already refused, waiters rejected): lets holds in use finish for
 * `timeout` ms, then loses (tells) and frees those still held, and waits for attempts in
 * flight so a late grant is freed; Redis gets FINAL_RELEASE_TIMEOUT ms to answer.
 */
export async function finishHolds(
  { calls, holds }: { calls: HoldCalls; holds: LockHolds },
  timeout: number,
  logger: { warn(message: string): void },
): Promise<void> {
  // Grants already answered reach their (rejected) waiters and are dropped, not "lost".
  await new Promise<void>((resolve) => setImmediate(resolve));
  const deadline = now() + timeout;
  while (holds.size > 0 && now() < deadline) await sleep(Math.min(50, deadline - now()));
  const remaining = holds.all();
  for (const hold of remaining) {
    holds.lose(
      hold,
      `the application shut down while its work still ran (shutdownTimeout ${timeout} ms), so it was released`,
    );
  }
  const releasing = Promise.all([...remaining.map((hold) => calls.drop(hold)), calls.drained()]);
  if (!(await resolvesWithin(releasing, FINAL_RELEASE_TIMEOUT))) {
    logger.warn(
      `Redis did not answer the final releases within ${FINAL_RELEASE_TIMEOUT} ms; locks not released expire within their lease.`,
    );
  }
}
