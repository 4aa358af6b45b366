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

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Resolves when `predicate` holds, polling every 10 ms; rejects after `timeout` ms. */
export async function until(predicate: () => boolean | Promise<boolean>, timeout = 5_000) {
  const deadline = Date.now() + timeout;
  while (!(await predicate())) {
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeout} ms`);
    await sleep(10);
  }
}
