/**
 * The lock service of a child process that a test starts (child-processes.ts): RedisLockModule
 * with `options` in a Nest application context of its own, without a logger.
 */
import 'reflect-metadata';
import { Module, type INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { LockService, RedisLockModule, type RedisLockModuleOptions } from '../../lib';

/** The child's application (close it to end cleanly) and its LockService. */
export async function childApp(
  options: RedisLockModuleOptions,
): Promise<{ app: INestApplicationContext; locks: LockService }> {
  @Module({ imports: [RedisLockModule.forRoot(options)] })
  class ChildModule {}
  const app = await NestFactory.createApplicationContext(ChildModule, { logger: false });
  return { app, locks: app.get(LockService) };
}
