import {
  ENGINE_OPTIONS,
  optionDefaults,
  optionNames,
  PERMIT_RUN_OPTIONS,
  RUN_OPTIONS,
} from '../../../lib/core';
import { PERMIT_OPTIONS, resolveLockOptions } from '../../../lib/core/options/lock-options';
import {
  MODULE_EXTRAS,
  MODULE_OPTIONS,
  resolveModuleOptions,
} from '../../../lib/nest/options/redis-lock-options.validation';

describe('option tables (pure)', () => {
  it('derive the known names of every family', () => {
    expect(optionNames(RUN_OPTIONS)).toEqual([
      'waitTime',
      'leaseTime',
      'signal',
      'fencing',
      'syncReplicas',
      'mode',
      'fair',
      'holdAtLeast',
      'maxHold',
      'onLockLost',
      'onBusy',
    ]);
    expect(optionNames(PERMIT_OPTIONS)).toEqual([
      'waitTime',
      'leaseTime',
      'signal',
      'syncReplicas',
      'maxHold',
    ]);
    expect(optionNames(PERMIT_RUN_OPTIONS)).toEqual([
      'waitTime',
      'leaseTime',
      'signal',
      'syncReplicas',
      'maxHold',
      'onLockLost',
      'onBusy',
    ]);
    expect(optionNames(MODULE_OPTIONS).slice(0, 4)).toEqual([
      'redis',
      'cluster',
      'client',
      'store',
    ]);
    expect(optionNames(MODULE_EXTRAS)).toEqual(['isGlobal', 'mapErrors']);
  });

  it('hold each default once: the module’s engine options are the engine’s', () => {
    const engine = optionDefaults(ENGINE_OPTIONS);
    expect(engine).toEqual({
      keyPrefix: '',
      leaseTime: 30_000,
      waitTime: 10_000,
      fencing: false,
      onLockLost: 'throw',
      syncReplicas: 0,
      fairQueueTimeout: 5_000,
      maxHold: Infinity,
    });
    expect(optionDefaults(MODULE_OPTIONS)).toMatchObject(engine);
    expect(resolveModuleOptions({ store: 'memory' })).toMatchObject(engine);
    expect(resolveLockOptions(undefined, engine)).toMatchObject({
      waitTime: 10_000,
      leaseTime: 30_000,
      fencing: false,
      syncReplicas: 0,
      fair: false,
      holdAtLeast: 0,
      maxHold: Infinity,
    });
  });

  it('refuses a bad forRoot extra, naming it', () => {
    expect(() => resolveModuleOptions({ store: 'memory', isGlobal: 1 })).toThrow(
      expect.objectContaining({ option: 'isGlobal' }) as Error,
    );
  });
});
