import { Test, type TestingModule } from '@nestjs/testing';
import type { INestApplication, ModuleMetadata } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import {
  LockService,
  MemoryLockStore,
  RedisLockModule,
  type RedisLockModuleOptions,
} from '../../lib';
import { NodeRedisServer } from './node-redis-server';
import type { TestRedis } from './redis-server';
import { suiteStore, type StoreKind, type SuiteStore } from './suite-store';

/**
 * A compiled testing module of `metadata` with RedisLockModule on `redis` (or a memory store;
 * `options` may name another server), under a fresh key prefix unless `options` give one.
 */
export async function lockModule(
  redis: TestRedis | NodeRedisServer | MemoryLockStore,
  options: Partial<RedisLockModuleOptions> = {},
  metadata: ModuleMetadata = {},
): Promise<{ moduleRef: TestingModule; prefix: string }> {
  const prefix = options.keyPrefix ?? `t:${randomUUID().slice(0, 8)}:`;
  const moduleRef = await Test.createTestingModule({
    ...metadata,
    imports: [
      RedisLockModule.forRoot({
        ...(redis instanceof MemoryLockStore
          ? { store: redis }
          : redis instanceof NodeRedisServer
            ? { client: redis.client() }
            : { redis: redis.url }),
        ...options,
        keyPrefix: prefix,
      }),
      ...(metadata.imports ?? []),
    ],
  }).compile();
  return { moduleRef, prefix };
}

/** A Nest application of lockModule(), started. */
export async function lockApp(
  ...args: Parameters<typeof lockModule>
): Promise<{ app: INestApplication; locks: LockService; prefix: string }> {
  const { moduleRef, prefix } = await lockModule(...args);
  const app = moduleRef.createNestApplication({ logger: false });
  await app.init();
  return { app, locks: app.get(LockService), prefix };
}

/** What lockApp() makes. */
export type LockApp = Awaited<ReturnType<typeof lockApp>>;

/**
 * A lockApp() made before each test of the enclosing block and closed after it; `made` gets it
 * (assign the block's variables there). `redis` is a suite's store (suiteStore) or a function
 * read when the app is made, as `options` may be: a suite's server, another app's prefix.
 */
export function lockAppEach(
  redis: SuiteStore | (() => TestRedis | NodeRedisServer | MemoryLockStore),
  options: Partial<RedisLockModuleOptions> | (() => Partial<RedisLockModuleOptions>),
  made: (app: LockApp) => void,
  metadata?: ModuleMetadata,
): void {
  let app: INestApplication | undefined;
  beforeEach(async () => {
    const opened = await lockApp(
      typeof redis === 'function' ? redis() : redis.target,
      typeof options === 'function' ? options() : options,
      metadata,
    );
    app = opened.app;
    made(opened);
  });
  afterEach(async () => {
    await app?.close();
    app = undefined;
  });
}

/**
 * Two lockAppEach() apps on one key prefix, as two processes of one application would be: the
 * first with `options` and `metadata`, the second with the first's lease only; `made` gets both.
 */
export function lockAppPairEach(
  store: SuiteStore,
  options: Partial<RedisLockModuleOptions>,
  made: (first: LockApp, second: LockApp) => void,
  metadata?: ModuleMetadata,
): void {
  let first: LockApp;
  lockAppEach(store, options, (app) => (first = app), metadata);
  lockAppEach(
    store,
    () => ({ keyPrefix: first.prefix, leaseTime: options.leaseTime }),
    (second) => made(first, second),
  );
}

/** A suite's store and the app its running test has on it (storeAppEach). */
export interface StoreApp extends LockApp {
  readonly store: SuiteStore;
}

/**
 * A suite's store of `kind` (suiteStore) with a lockAppEach() app on it. The store is the
 * suite's; `app`, `locks` and `prefix` are the running test's app (read them in hooks and tests).
 */
export function storeAppEach(
  kind: StoreKind,
  options: Partial<RedisLockModuleOptions>,
  metadata?: ModuleMetadata,
): StoreApp {
  const store = suiteStore(kind);
  let current: LockApp | undefined;
  lockAppEach(store, options, (made) => (current = made), metadata);
  return new RunningApp(store, () => current);
}

/**
 * storeAppEach() with lockAppPairEach(): the object is the first app, and `other` the second one
 * on its key prefix, as another process of one application would be.
 */
export function storeAppPairEach(
  kind: StoreKind,
  options: Partial<RedisLockModuleOptions>,
  metadata?: ModuleMetadata,
): StoreApp & { readonly other: LockApp } {
  const store = suiteStore(kind);
  let current: [LockApp, LockApp] | undefined;
  lockAppPairEach(store, options, (first, second) => (current = [first, second]), metadata);
  return new RunningPair(store, () => current);
}

/** The StoreApp whose app is the one `current` gives (made by a hook). */
class RunningApp implements StoreApp {
  constructor(
    readonly store: SuiteStore,
    private readonly current: () => LockApp | undefined,
  ) {}

  get app(): INestApplication {
    return opened(this.current()).app;
  }

  get locks(): LockService {
    return opened(this.current()).locks;
  }

  get prefix(): string {
    return opened(this.current()).prefix;
  }
}

/** A RunningApp of the first of a pair of apps, with the second as `other`. */
class RunningPair extends RunningApp {
  constructor(
    store: SuiteStore,
    private readonly pair: () => [LockApp, LockApp] | undefined,
  ) {
    super(store, () => pair()?.[0]);
  }

  get other(): LockApp {
    return opened(this.pair()?.[1]);
  }
}

/** `app`, once a hook has made it: a suite's apps are there inside its tests, not before. */
function opened(app: LockApp | undefined): LockApp {
  if (!app) throw new Error('no app yet: read a suite app inside a test or hook');
  return app;
}
