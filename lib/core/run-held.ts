import { LockLostError } from '../errors';
import type { LockHandle } from './lock-handle';

/**
 * Runs `fn` under the held `handle`, then releases it. The function's own error wins over a
 * release error (a loss is logged and emitted by the hold); a loss found at the release of a
 * call that succeeded goes to `onLost` (the call's lost policy), any other release error is thrown.
 */
export async function runHeld<T>(
  handle: LockHandle,
  fn: () => T | Promise<T>,
  onLost: (error: LockLostError) => void,
): Promise<T> {
  let result: T;
  try {
    result = await fn();
  } catch (error) {
    await handle.release().catch(() => undefined);
    throw error;
  }
  try {
    await handle.release();
  } catch (error) {
    if (!(error instanceof LockLostError)) throw error;
    onLost(error);
  }
  return result;
}
