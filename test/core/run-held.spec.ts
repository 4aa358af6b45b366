import { LockError, LockLostError } from '../../lib';
import type { LockHandle } from '../../lib/core/lock-handle';
import { runHeld } from '../../lib/core/run-held';

/** A handle whose release() settles as `release` says, counting its calls. */
function handle(release: () => Promise<void>) {
  const held = { releases: 0 } as { releases: number } & Pick<LockHandle, 'release'>;
  held.release = () => {
    held.releases++;
    return release();
  };
  return held;
}

describe('runHeld', () => {
  const lost = () => new LockLostError('k', 'expired');

  it('returns the function’s result and releases once', async () => {
    const held = handle(() => Promise.resolve());
    await expect(runHeld(held as unknown as LockHandle, () => 7, jest.fn())).resolves.toBe(7);
    expect(held.releases).toBe(1);
  });

  it('throws the function’s own error over a release error, after releasing', async () => {
    const held = handle(() => Promise.reject(lost()));
    const onLost = jest.fn();
    const failing = () => Promise.reject(new Error('work failed'));
    await expect(runHeld(held as unknown as LockHandle, failing, onLost)).rejects.toThrow(
      'work failed',
    );
    expect(held.releases).toBe(1);
    expect(onLost).not.toHaveBeenCalled();
  });

  it('hands a loss found at the release to the lost policy and keeps the result', async () => {
    const error = lost();
    const held = handle(() => Promise.reject(error));
    const onLost = jest.fn();
    await expect(runHeld(held as unknown as LockHandle, () => 'done', onLost)).resolves.toBe(
      'done',
    );
    expect(onLost).toHaveBeenCalledWith(error);
  });

  it('throws a release error that is not a loss', async () => {
    const held = handle(() => Promise.reject(new LockError('store down')));
    const onLost = jest.fn();
    await expect(runHeld(held as unknown as LockHandle, () => 1, onLost)).rejects.toThrow(
      'store down',
    );
    expect(onLost).not.toHaveBeenCalled();
  });

  it('waits for the release before it settles', async () => {
    let freed = false;
    const held = handle(async () => {
      await new Promise((resolve) => setImmediate(resolve));
      freed = true;
    });
    await runHeld(held as unknown as LockHandle, () => undefined, jest.fn());
    expect(freed).toBe(true);
  });
});
