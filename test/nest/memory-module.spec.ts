import { Injectable } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import {
  LockAcquireTimeoutError,
  LockOptionsError,
  LockService,
  Locked,
  MemoryLockStore,
  RedisLockModule,
  type RedisLockModuleOptions,
  type RedisLockTestingOptions,
} from '../../lib';
import { sleep } from '../../tools/time';

/** Increments a counter in two steps, under a lock (lost updates unless excluded). */
@Injectable()
class Jobs {
  count = 0;
  skipped = 0;
  constructor(readonly locks: LockService) {}

  @Locked('jobs:count')
  async increment(): Promise<number> {
    const value = this.count;
    await sleep(1);
    this.count = value + 1;
    return this.locks.holdCount('jobs:count');
  }

  @Locked('jobs:count')
  async nested(): Promise<number> {
    return this.increment();
  }

  @Locked('jobs:count', { waitTime: 0, onBusy: 'skip' })
  async sweep(): Promise<string> {
    await sleep(50);
    return 'swept';
  }
}

async function start(module: ReturnType<typeof RedisLockModule.forRoot>) {
  const moduleRef = await Test.createTestingModule({
    imports: [module],
    providers: [Jobs],
  }).compile();
  const app = moduleRef.createNestApplication({ logger: false });
  await app.init();
  return { app, locks: app.get(LockService), jobs: app.get(Jobs) };
}
const testing = (options?: RedisLockTestingOptions) => start(RedisLockModule.forTesting(options));

describe('the memory store in the module', () => {
  it("forRoot({ store: 'memory' }) boots without Redis; two apps share the process-wide store", async () => {
    const [a, b] = [
      await start(RedisLockModule.forRoot({ store: 'memory' })),
      await start(RedisLockModule.forRoot({ store: 'memory' })),
    ];
    try {
      const held = await a.locks.acquire('memory:shared');
      expect(await b.locks.tryAcquire('memory:shared')).toBeNull();
      expect(await b.locks.isLocked('memory:shared')).toBe(true);
      await held.release();
      await (await b.locks.acquire('memory:shared', { waitTime: 1_000 })).release();
    } finally {
      await Promise.all([a.app.close(), b.app.close()]);
    }
  });

  it('forTesting() gives each module its own store, or the one it is given', async () => {
    const shared = new MemoryLockStore();
    const apps = [await testing(), await testing(), await testing({ store: shared })];
    const fourth = await testing({ store: shared });
    try {
      const holds = await Promise.all(apps.map(({ locks }) => locks.acquire('same')));
      expect(await fourth.locks.tryAcquire('same')).toBeNull();
      await Promise.all(holds.map((hold) => hold.release()));
    } finally {
      await Promise.all([...apps, fourth].map(({ app }) => app.close()));
    }
  });

  it('forTesting() waits 1 s by default and lets its options override that', async () => {
    const { app, locks } = await testing();
    const quick = await testing({ waitTime: 100 });
    try {
      const held = await locks.acquire('busy');
      const started = Date.now();
      const error = await locks.run('busy', () => 'ran').catch((e: unknown) => e);
      expect(error).toBeInstanceOf(LockAcquireTimeoutError);
      expect((error as Error).message).toContain('"busy" within 1000 ms');
      expect(Date.now() - started).toBeGreaterThanOrEqual(990);
      await held.release();
      const other = await quick.locks.acquire('busy');
      await expect(quick.locks.run('busy', () => 'ran')).rejects.toThrow('within 100 ms');
      await other.release();
    } finally {
      await Promise.all([app.close(), quick.app.close()]);
    }
  });

  it.each<[string, Partial<RedisLockModuleOptions>, RegExp]>([
    ['memory and redis', { store: 'memory', redis: 'redis://127.0.0.1:1' }, /exactly one of/],
    ['an unknown store', { store: 'disk' as 'memory' }, /'memory' or a MemoryLockStore/],
  ])('refuses %s, naming the store option', async (_what, options, message) => {
    const error = await start(RedisLockModule.forRoot(options)).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LockOptionsError);
    expect((error as LockOptionsError).option).toBe('store');
    expect((error as Error).message).toMatch(message);
  });
});

describe('@Locked on the memory store', () => {
  it('excludes concurrent calls, re-enters nested ones and skips when busy', async () => {
    const { app, jobs } = await testing();
    try {
      await Promise.all(Array.from({ length: 20 }, () => jobs.increment()));
      expect(jobs.count).toBe(20);
      expect(await jobs.nested()).toBe(2);
      const running = jobs.sweep();
      expect(await jobs.sweep()).toBeUndefined(); // busy: skipped without running
      expect(await running).toBe('swept');
    } finally {
      await app.close();
    }
  });

  it('the same counter without a lock loses updates (the check above can fail)', async () => {
    const jobs = { count: 0 };
    const unlocked = async () => {
      const value = jobs.count;
      await sleep(1);
      jobs.count = value + 1;
    };
    await Promise.all(Array.from({ length: 20 }, unlocked));
    expect(jobs.count).toBeLessThan(20);
  });

  it('calls an overriding LockService (overrideProvider) for @Locked methods', async () => {
    const keys: string[] = [];
    const fake = {
      run: (key: string, fn: () => unknown) => {
        keys.push(key);
        return Promise.resolve(fn());
      },
      holdCount: () => 7,
    };
    const moduleRef = await Test.createTestingModule({
      imports: [RedisLockModule.forTesting()],
      providers: [Jobs],
    })
      .overrideProvider(LockService)
      .useValue(fake)
      .compile();
    const app = await moduleRef.createNestApplication({ logger: false }).init();
    try {
      expect(await app.get(Jobs).increment()).toBe(7);
      expect(keys).toEqual(['jobs:count']);
    } finally {
      await app.close();
    }
  });
});
