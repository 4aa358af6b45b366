import { checkLockOptions, RUN_OPTIONS } from '../../../lib/core';
import { resolveLockOptions } from '../../../lib/core/options/lock-options';
import { LockOptionsError } from '../../../lib/errors';
import { resolveModuleOptions } from '../../../lib/nest/options/redis-lock-options.validation';

const DEFAULTS = { waitTime: 0, leaseTime: 30_000, fencing: false, syncReplicas: 0, maxHold: 5 };

/** The LockOptionsError `options` get, as option name and message. */
function refusal(options: object): { option: string; message: string } {
  try {
    checkLockOptions(options, RUN_OPTIONS);
  } catch (error) {
    expect(error).toBeInstanceOf(LockOptionsError);
    const { option, message } = error as LockOptionsError;
    return { option, message };
  }
  throw new Error(`accepted ${JSON.stringify(options)}`);
}

describe('holdAtLeast and maxHold options (pure)', () => {
  it.each([
    [{ holdAtLeast: -1 }, 'holdAtLeast', /whole number of ms from 0 to 2147483647, got -1/],
    [{ holdAtLeast: 1.5 }, 'holdAtLeast', /got 1.5/],
    [{ holdAtLeast: Infinity }, 'holdAtLeast', /got Infinity/],
    [{ holdAtLeast: '10s' }, 'holdAtLeast', /got "10s"/],
    [{ maxHold: 0 }, 'maxHold', /from 1 to 2\^31-1, or Infinity for no cap, got 0/],
    [{ maxHold: NaN }, 'maxHold', /got NaN/],
    [{ holdAtLeast: 10, fair: true }, 'holdAtLeast', /plain locks only: a fair lock/],
    [{ holdAtLeast: 10, mode: 'write' }, 'holdAtLeast', /plain locks only: a read-write lock/],
    [{ holdAtLeast: 1_001, leaseTime: 1_000 }, 'holdAtLeast', /longer than the explicit leaseTime/],
    [{ maxHold: 1_000, leaseTime: 1_000 }, 'maxHold', /no watchdog/],
  ])('refuses %j', (options, option, message) => {
    const refused = refusal(options);
    expect(refused.option).toBe(option);
    expect(refused.message).toMatch(message);
  });

  it('accepts holdAtLeast up to an explicit lease, 0 with any kind, and fills in the defaults', () => {
    expect(resolveLockOptions({ holdAtLeast: 1_000, leaseTime: 1_000 }, DEFAULTS)).toMatchObject({
      holdAtLeast: 1_000,
      watchdog: false,
    });
    expect(resolveLockOptions({ holdAtLeast: 0, fair: true }, DEFAULTS).holdAtLeast).toBe(0);
    expect(resolveLockOptions({ fencing: true, holdAtLeast: 7 }, DEFAULTS)).toMatchObject({
      fencing: true,
      holdAtLeast: 7,
      maxHold: 5, // the engine-wide default
    });
    expect(resolveLockOptions({ maxHold: Infinity }, DEFAULTS).maxHold).toBe(Infinity);
  });

  it('takes maxHold as a module option, checked the same way', () => {
    expect(resolveModuleOptions({ store: 'memory' }).maxHold).toBe(Infinity);
    expect(resolveModuleOptions({ store: 'memory', maxHold: 60_000 }).maxHold).toBe(60_000);
    expect(() => resolveModuleOptions({ store: 'memory', maxHold: -1 })).toThrow(
      expect.objectContaining({ option: 'maxHold' }) as Error,
    );
  });
});
