import { Controller, Get, Module, type INestApplication } from '@nestjs/common';
import { HealthCheck, HealthCheckService, TerminusModule } from '@nestjs/terminus';
import { Test } from '@nestjs/testing';
import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { LockService, RedisLockModule } from '../../lib';
import { RedisLockHealthIndicator } from '../../lib/health';
import { freePort } from '../support/redis-server';
import { suiteRedis } from '../support/suite-redis';

@Controller('health')
class HealthController {
  constructor(
    private readonly health: HealthCheckService,
    private readonly locks: RedisLockHealthIndicator,
  ) {}

  @Get()
  @HealthCheck()
  check() {
    return this.health.check([() => this.locks.isHealthy('locks', { timeout: 300 })]);
  }
}

@Module({
  imports: [TerminusModule.forRoot({ logger: false })],
  controllers: [HealthController],
  providers: [RedisLockHealthIndicator],
})
class HealthModule {}

describe('RedisLockHealthIndicator', () => {
  const server = suiteRedis();
  const apps: INestApplication[] = [];
  afterAll(async () => {
    await Promise.all(apps.map((app) => app.close()));
  });

  async function start(redis: string) {
    const moduleRef = await Test.createTestingModule({
      imports: [
        RedisLockModule.forRoot({
          redis,
          keyPrefix: `t:${randomUUID().slice(0, 8)}:`,
          checkOnStartup: 'off',
        }),
        HealthModule,
      ],
    }).compile();
    const app = moduleRef.createNestApplication({ logger: false });
    await app.init();
    apps.push(app);
    return app;
  }

  it('is up with the PING latency and the number of locks this app holds', async () => {
    const app = await start(server.redis.url);
    const first = await request(app.getHttpServer()).get('/health').expect(200);
    expect(first.body.info.locks).toEqual({
      status: 'up',
      latencyMs: expect.any(Number),
      heldLocks: 0,
    });
    const held = await app.get(LockService).acquire('health:a');
    const second = await request(app.getHttpServer()).get('/health').expect(200);
    await held.release();
    expect(second.body.info.locks.heldLocks).toBe(1);
  });

  it('is down, with the reason, when Redis does not answer', async () => {
    const app = await start(`redis://127.0.0.1:${await freePort()}`);
    const response = await request(app.getHttpServer()).get('/health').expect(503);
    expect(response.body.error.locks).toEqual({
      status: 'down',
      message: 'Redis did not answer a PING within 300 ms.',
      heldLocks: 0,
    });
  });

  it('is a separate entry: the library loads without @nestjs/terminus', () => {
    jest.isolateModules(() => {
      jest.doMock('@nestjs/terminus', () => {
        throw new Error("Cannot find module '@nestjs/terminus'");
      });
      // require(): loaded here, inside the isolated registry with terminus missing.
      /* eslint-disable @typescript-eslint/no-require-imports */
      expect(() => require('../../lib') as unknown).not.toThrow();
      expect(() => require('../../lib/health') as unknown).toThrow(/@nestjs\/terminus/);
      /* eslint-enable @typescript-eslint/no-require-imports */
    });
  });
});
