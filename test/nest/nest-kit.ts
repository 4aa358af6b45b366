import type { INestApplication, LoggerService, ModuleMetadata } from '@nestjs/common';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import { Test } from '@nestjs/testing';
import { randomUUID } from 'node:crypto';
import { RedisLockModule, type RedisLockModuleOptions } from '../../lib';
import type { TestRedis } from '../support/redis-server';

/** One log line an application wrote. */
export interface LogLine {
  level: string;
  message: string;
  /** When it was logged (Date.now()). */
  at: number;
}

/** A Nest LoggerService that keeps every line (all levels) for assertions. */
export class CapturingLogger implements LoggerService {
  readonly lines: LogLine[] = [];
  log = (message: unknown) => this.keep('log', message);
  error = (message: unknown, ...rest: unknown[]) => this.keep('error', [message, ...rest]);
  warn = (message: unknown) => this.keep('warn', message);
  debug = (message: unknown) => this.keep('debug', message);
  verbose = (message: unknown) => this.keep('verbose', message);

  /** Lines of `level`. */
  at(level: string): string[] {
    return this.lines.filter((line) => line.level === level).map((line) => line.message);
  }

  private keep(level: string, message: unknown) {
    const text = typeof message === 'string' ? message : String(message);
    this.lines.push({ level, message: text, at: Date.now() });
  }
}

/** Module options with options extras (`isGlobal`, `mapErrors`). */
export type ModuleOptions = Partial<RedisLockModuleOptions> & { mapErrors?: boolean };

/** The HTTP platforms the library supports, for `describe.each`. */
export const PLATFORMS = ['express', 'fastify'] as const;

/** A started HTTP application on `platform` with RedisLockModule under a fresh key prefix. */
export async function httpApp(
  platform: (typeof PLATFORMS)[number],
  redis: TestRedis,
  options: ModuleOptions,
  metadata: ModuleMetadata,
): Promise<{ app: INestApplication; logger: CapturingLogger; prefix: string }> {
  const prefix = `t:${randomUUID().slice(0, 8)}:`;
  const logger = new CapturingLogger();
  const moduleRef = await Test.createTestingModule({
    ...metadata,
    imports: [
      RedisLockModule.forRoot({ redis: redis.url, ...options, keyPrefix: prefix }),
      ...(metadata.imports ?? []),
    ],
  }).compile();
  const app =
    platform === 'fastify'
      ? moduleRef.createNestApplication(new FastifyAdapter(), { logger })
      : moduleRef.createNestApplication({ logger });
  await app.init();
  if (platform === 'fastify') {
    await (app.getHttpAdapter().getInstance() as { ready(): Promise<unknown> }).ready();
  }
  return { app, logger, prefix };
}
