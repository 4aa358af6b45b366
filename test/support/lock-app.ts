import { Test } from '@nestjs/testing';
import type { INestApplication, ModuleMetadata } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import {
  LockService,
  MemoryLockStore,
  RedisLockModule,
  type RedisLockModuleOptions,
} from '../../lib';
import type { TestRedis } from './redis-server';

/** A Nest application with RedisLockModule on `redis` (or a memory store), under a fresh key prefix. */
export async function lockApp(
  redis: TestRedis | MemoryLockStore,
  options: Partial<RedisLockModuleOptions> = {},
  metadata: ModuleMetadata = {},
): Promise<{ app: INestApplication; locks: LockService; prefix: string }> {
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
  const app = moduleRef.createNestApplication({ logger: false });
  await app.init();
  return { app, locks: app.get(LockService), prefix };
}

/** What lockApp() makes. */
export type LockApp = Awaited<ReturnType<typeof lockApp>>;

/**
 * A lockApp() made before each test of the enclosing block and closed after it; `made` gets it
 * (assign the block's variables there). `redis` and `options` may be functions, read when the
 * app is made: a suite's server, another app's prefix.
 */
export function lockAppEach(
  redis: () => TestRedis | MemoryLockStore,
  options: Partial<RedisLockModuleOptions> | (() => Partial<RedisLockModuleOptions>),
  made: (app: LockApp) => void,
  metadata?: ModuleMetadata,
): void {
  let app: INestApplication | undefined;
  beforeEach(async () => {
    const opened = await lockApp(
      redis(),
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

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Resolves when `predicate` holds, polling every 10 ms; rejects after `timeout` ms. */
export async function until(predicate: () => boolean | Promise<boolean>, timeout = 5_000) {
  const deadline = Date.now() + timeout;
  while (!(await predicate())) {
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeout} ms`);
    await sleep(10);
  }
}
