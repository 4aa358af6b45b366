import { Controller, Get, Module, Query, type INestApplication } from '@nestjs/common';
import { HealthCheck, HealthCheckService } from '@nestjs/terminus';
import request from 'supertest';
import { LockService } from '../../lib';
import { RedisLockHealthIndicator, RedisLockHealthModule } from '../../lib/health';
import { freePort } from '../support/redis-server';
import { lockApp } from '../support/lock-app';
import { suiteRedis } from '../support/suite-redis';

// README.md's health-check snippet, as written there, but the PING's timeout is the request's
// `timeout` (300 ms unless given) instead of 1 000 ms.
@Controller('health')
class HealthController {
  constructor(
    private readonly health: HealthCheckService,
    private readonly locks: RedisLockHealthIndicator,
  ) {}

  @Get()
  @HealthCheck()
  check(@Query('timeout') timeout = '300') {
    return this.health.check([() => this.locks.isHealthy('locks', { timeout: Number(timeout) })]);
  }
}

/** GET `path`, expecting `status`; a failure shows the answer's body (the indicator's reason). */
async function expectAnswer(app: INestApplication, path: string, status: number) {
  const response = await request(app.getHttpServer()).get(path);
  expect({ status: response.status, body: response.body as unknown }).toMatchObject({ status });
  return response;
}

@Module({
  imports: [RedisLockHealthModule],
  controllers: [HealthController],
})
class HealthModule {}

/**
 * The health indicator's tests, on whichever `@nestjs/terminus` the calling spec resolves (a
 * spec may map it to another major with jest.mock).
 */
export function healthIndicatorTests(): void {
  const server = suiteRedis();

  /** An app with the health endpoint, its lock module on the server at `redis` (a URL). */
  async function start(redis: string) {
    const options = { redis, checkOnStartup: 'off' } as const;
    const { app } = await lockApp(server.redis, options, { imports: [HealthModule] });
    return server.closing(app);
  }

  it('is up with the PING latency and the number of locks this app holds', async () => {
    const app = await start(server.redis.url);
    // 5 s: the first PING also opens the connection, and 300 ms was once too short for that in
    // a loaded CI run (503); this test is about what an answer reports, not how fast it comes.
    const first = await expectAnswer(app, '/health?timeout=5000', 200);
    expect(first.body.info.locks).toEqual({
      status: 'up',
      latencyMs: expect.any(Number),
      heldLocks: 0,
    });
    const held = await app.get(LockService).acquire('health:a');
    const second = await expectAnswer(app, '/health?timeout=5000', 200);
    await held.release();
    expect(second.body.info.locks.heldLocks).toBe(1);
  });

  it('is down, with the reason, when Redis does not answer', async () => {
    const app = await start(`redis://127.0.0.1:${await freePort()}`);
    const response = await expectAnswer(app, '/health', 503);
    expect(response.body.error.locks).toEqual({
      status: 'down',
      message: 'Redis did not answer a PING within 300 ms.',
      heldLocks: 0,
    });
  });
}
