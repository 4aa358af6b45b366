import { Test, type TestingModule } from '@nestjs/testing';
import type { INestApplication, ModuleMetadata } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import {
  LockService,
  MemoryLockStore,
  RedisLockModule,
  type RedisLockModuleOptions,
} from '../../lib';
import type { TestRedis } from './redis-server';
import type { SuiteStore } from './suite-store';

/**
 * A compiled testing module of `metadata` with RedisLockModule on `redis` (or a memory store;
 * `options` may name another server), under a fresh key prefix unless `options` give one.
 */
export async function lockModule(
  redis: TestRedis | MemoryLockStore,
  options: Partial<RedisLockModuleOptions> = {},
  metadata: ModuleMetadata = {},
): Promise<{ moduleRef: TestingModule; prefix: string }> {
  const prefix = options.keyPrefix ?? `t:${randomUUID().slice(0, 8)}:`;
  const moduleRef = await Test.createTestingModule({
    ...metadata,
    imports: [
      RedisLockModule.forRoot({
        ...(redis instanceof MemoryLockStore ? { store: redis } : { redis: redis.url }),
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
  redis: SuiteStore | (() => TestRedis | MemoryLockStore),
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
