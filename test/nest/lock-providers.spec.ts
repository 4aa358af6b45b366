import { Inject, Injectable } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import {
  LOCK_ENGINE,
  LOCK_STORE,
  LockAcquireTimeoutError,
  LockOptionsError,
  LockService,
  Locked,
  MemoryLockStore,
  RESOLVED_LOCK_OPTIONS,
  RedisLockModule,
  Semaphore,
  type LockStore,
  type ResolvedModuleOptions,
} from '../../lib';
import type { LockEngine } from '../../lib/core';
import { CallOptions } from '../../lib/core/options/call-options';

/**
 * A LockStore of the user's own: the memory store's, through a proxy that counts acquires and
 * releases (without the fast-path twins, so every one goes through them) and hides what a store
 * the module opened has (connect, ping, close).
 */
function countingStore(inner: LockStore = new MemoryLockStore().connect()) {
  const calls = { acquire: 0, release: 0 };
  const hidden = new Set<PropertyKey>(['acquireInto', 'releaseInto', 'connect', 'ping', 'close']);
  const store = new Proxy(inner, {
    get(target, property) {
      if (hidden.has(property)) return undefined;
      const value: unknown = Reflect.get(target, property, target);
      if (typeof value !== 'function') return value;
      return (...args: unknown[]): unknown => {
        if (property === 'acquire' || property === 'release') calls[property]++;
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
  return { store, calls };
}

@Injectable()
class Jobs {
  constructor(
    readonly locks: LockService,
    @Inject(LOCK_ENGINE) readonly engine: LockEngine,
    @Inject(RESOLVED_LOCK_OPTIONS) readonly options: ResolvedModuleOptions,
    @Inject(LOCK_STORE) readonly store: LockStore,
  ) {}

  @Locked('job:<0>', { waitTime: 0 })
  run(id: string): Promise<number> {
    return Promise.resolve(this.locks.holdCount(`job:${id}`));
  }

  @Semaphore('export', { permits: 2 })
  exportAll(): Promise<number> {
    return Promise.resolve(this.engine.heldCount);
  }
}

async function boot(module: ReturnType<typeof RedisLockModule.forTesting>, store?: LockStore) {
  let builder = Test.createTestingModule({ imports: [module], providers: [Jobs] });
  if (store) builder = builder.overrideProvider(LOCK_STORE).useValue(store);
  const app = (await builder.compile()).createNestApplication({ logger: false });
  await app.init();
  return { app, jobs: app.get(Jobs), locks: app.get(LockService) };
}

describe('the module’s providers', () => {
  afterEach(() => jest.restoreAllMocks());

  it('provides the resolved options, the store and the engine the service runs on', async () => {
    const { app, jobs, locks } = await boot(RedisLockModule.forTesting({ keyPrefix: 'p:' }));
    try {
      expect(jobs.options).toMatchObject({ keyPrefix: 'p:', waitTime: 1_000, shutdownTimeout: 0 });
      expect(jobs.options.leaseTime).toBe(30_000);
      const held = await locks.acquire('k');
      expect(jobs.engine.heldCount).toBe(1);
      expect(
        await jobs.store.remainingTtl({ kind: 'lock', key: 'k', name: 'p:k' }),
      ).toBeGreaterThan(0);
      await held.release();
      expect(app.get(LOCK_ENGINE)).toBe(jobs.engine);
    } finally {
      await app.close();
    }
  });

  it('takes a LockStore of the user’s own as the `store` option, and leaves it open', async () => {
    const inner = new MemoryLockStore().connect();
    const close = jest.spyOn(inner, 'close');
    const { store, calls } = countingStore(inner);
    const { app, jobs, locks } = await boot(RedisLockModule.forTesting({ store }));
    try {
      expect(await jobs.run('a')).toBe(1);
      expect(await jobs.exportAll()).toBe(1);
      expect(await locks.run('b', () => 'ran')).toBe('ran');
      expect(calls).toEqual({ acquire: 3, release: 3 });
      expect(await locks.ping()).toBe(0); // no ping() of its own
    } finally {
      await app.close();
    }
    expect(close).not.toHaveBeenCalled();
  });

  it('runs on a LockStore given by overrideProvider(LOCK_STORE)', async () => {
    const shared = new MemoryLockStore();
    const { store, calls } = countingStore(shared.connect());
    const { app, jobs, locks } = await boot(RedisLockModule.forTesting(), store);
    const other = await boot(RedisLockModule.forTesting({ store: shared }));
    try {
      expect(await jobs.run('a')).toBe(1);
      expect(calls.acquire).toBe(1);
      // The override is the store: an app on the same memory store sees its locks.
      const held = await locks.acquire('job:b');
      await expect(other.jobs.run('b')).rejects.toThrow(LockAcquireTimeoutError);
      await held.release();
      expect(await other.jobs.run('b')).toBe(1);
    } finally {
      await app.close();
      await other.app.close();
    }
  });

  it('refuses a `store` that is no LockStore, naming the option', () => {
    expect(() => RedisLockModule.forTesting({ store: {} as LockStore })).not.toThrow(); // checked at boot
    return expect(boot(RedisLockModule.forTesting({ store: {} as LockStore }))).rejects.toThrow(
      expect.objectContaining({ option: 'store' }) as LockOptionsError,
    );
  });

  it('checks a decorated call’s options once, when decorating: a call checks nothing', async () => {
    const { app, jobs, locks } = await boot(RedisLockModule.forTesting());
    try {
      const resolve = jest.spyOn(CallOptions.prototype, 'resolve');
      const run = jest.spyOn(locks, 'run');
      expect(await jobs.run('a')).toBe(1);
      expect(await jobs.exportAll()).toBe(1);
      expect(resolve).not.toHaveBeenCalled();
      expect(run).not.toHaveBeenCalled();
      await locks.run('b', () => undefined); // the programmatic call checks its options
      expect(resolve).toHaveBeenCalledTimes(1);
    } finally {
      await app.close();
    }
  });

  it('refuses bad extras where the module is defined (isGlobal, mapErrors)', () => {
    const no = 'no' as unknown as boolean;
    for (const define of [
      () => RedisLockModule.forTesting({ mapErrors: no }),
      () => RedisLockModule.forRoot({ store: 'memory', isGlobal: no }),
      () =>
        RedisLockModule.forRootAsync({ useFactory: () => ({ store: 'memory' }), mapErrors: no }),
    ]) {
      expect(define).toThrow(LockOptionsError);
    }
  });
});
