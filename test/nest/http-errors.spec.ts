import { Body, Controller, Get, Param, Post, type INestApplication } from '@nestjs/common';
import request from 'supertest';
import { LockError, LockRedisError, LockService, Locked } from '../../lib';
import { suiteRedis } from '../support/suite-redis';
import { httpApp, PLATFORMS, type ModuleOptions } from './nest-kit';

@Controller('orders')
class OrdersController {
  @Post(':id/pay')
  @Locked('order:<0>', { waitTime: 50 })
  async pay(@Param('id') id: string) {
    return Promise.resolve({ paid: id });
  }

  @Post('update')
  @Locked('order:<0.id>', { waitTime: 50 })
  async update(@Body() order: { id?: string }) {
    return Promise.resolve({ updated: order.id });
  }

  @Get('broken')
  async broken(): Promise<never> {
    return Promise.reject(new LockError('a lock error that is not a busy lock'));
  }

  @Get('redis-down')
  async redisDown(): Promise<never> {
    const refused = new Error('connect ECONNREFUSED 127.0.0.1:6379');
    return Promise.reject(new LockRedisError('order:11', 'acquire', refused));
  }

  @Get('plain')
  async plain(): Promise<never> {
    return Promise.reject(new Error('plain failure'));
  }
}

describe.each(PLATFORMS)('error mapping on HTTP (%s)', (platform) => {
  const server = suiteRedis();
  const apps: INestApplication[] = [];
  afterEach(async () => {
    await Promise.all(apps.splice(0).map((app) => app.close()));
  });

  async function start(options: ModuleOptions = {}) {
    const started = await httpApp(platform, server.redis, options, {
      controllers: [OrdersController],
    });
    apps.push(started.app);
    return { ...started, locks: started.app.get(LockService) };
  }

  /** The answer, expected with `status`, to paying order `id` while another caller holds it. */
  async function payWhileHeld(
    { app, locks }: Awaited<ReturnType<typeof start>>,
    id: number,
    leaseTime: number,
    status: number,
  ) {
    const held = await locks.acquire(`order:${id}`, { leaseTime });
    const response = await request(app.getHttpServer()).post(`/orders/${id}/pay`).expect(status);
    await held.release();
    return response;
  }

  it('answers a busy lock with 409, Retry-After from the lease left, no key and one debug line', async () => {
    const started = await start();
    const response = await payWhileHeld(started, 7, 20_000, 409);
    const { logger } = started;

    expect(response.body).toEqual({
      statusCode: 409,
      message: 'The resource is locked by another operation.',
      error: 'Conflict',
    });
    expect(JSON.stringify(response.body)).not.toContain('order:7');
    const retryAfter = Number(response.headers['retry-after']);
    expect(retryAfter).toBeGreaterThanOrEqual(19);
    expect(retryAfter).toBeLessThanOrEqual(20);
    expect(logger.at('error')).toEqual([]);
    expect(logger.at('debug').filter((line) => line.startsWith('Answered 409'))).toHaveLength(1);
  });

  it('uses busyStatus and names the key with exposeKeys', async () => {
    const started = await start({ busyStatus: 423, exposeKeys: true });
    const response = await payWhileHeld(started, 8, 5_000, 423);
    expect(response.body).toEqual({
      statusCode: 423,
      message: 'Lock "order:8" is held by another operation.',
      error: 'Locked',
    });
  });

  it('sends no Retry-After when the holder has no lease', async () => {
    const { app, prefix } = await start({ busyStatus: 503 });
    await server.raw.hset(`${prefix}order:9`, 'foreign-owner:1', 1);
    const response = await request(app.getHttpServer()).post('/orders/9/pay').expect(503);
    expect(response.body.error).toBe('Service Unavailable');
    expect(response.headers['retry-after']).toBeUndefined();
  });

  it('answers a key that cannot be built from the client input with 400', async () => {
    const { app, logger } = await start();
    const response = await request(app.getHttpServer())
      .post('/orders/update')
      .send({ note: 'no id' })
      .expect(400);
    expect(response.body).toEqual({
      statusCode: 400,
      message: 'Invalid lock key argument.',
      error: 'Bad Request',
    });
    expect(logger.at('error')).toEqual([]);
  });

  it('answers a Redis failure (LockRedisError) with 503 and Retry-After: 1, naming neither the key nor the Redis error', async () => {
    const { app, logger } = await start();
    const response = await request(app.getHttpServer()).get('/orders/redis-down').expect(503);
    expect(response.body).toEqual({
      statusCode: 503,
      message: 'The lock service is unavailable.',
      error: 'Service Unavailable',
    });
    expect(response.headers['retry-after']).toBe('1');
    expect(JSON.stringify(response.body)).not.toMatch(/order:11|ECONNREFUSED/);
    expect(logger.at('error')).toEqual([]);
    expect(logger.at('debug').filter((line) => line.startsWith('Answered 503'))).toHaveLength(1);
  });

  it('uses redisErrorStatus for a Redis failure (Retry-After only with 503) and names the key with exposeKeys', async () => {
    const { app } = await start({ redisErrorStatus: 500, exposeKeys: true });
    const response = await request(app.getHttpServer()).get('/orders/redis-down').expect(500);
    expect(response.body).toEqual({
      statusCode: 500,
      message: 'Lock "order:11" could not be taken: its store is unavailable.',
      error: 'Internal Server Error',
    });
    expect(response.headers['retry-after']).toBeUndefined();
  });

  it('leaves every other error to Nest: 500, logged', async () => {
    const { app, logger } = await start();
    for (const path of ['/orders/broken', '/orders/plain']) {
      const response = await request(app.getHttpServer()).get(path).expect(500);
      expect(response.body).toEqual({ statusCode: 500, message: 'Internal server error' });
    }
    expect(logger.at('error').join('\n')).toMatch(/not a busy lock[\s\S]*plain failure/);
  });

  it('maps nothing with mapErrors: false', async () => {
    const started = await start({ mapErrors: false });
    await payWhileHeld(started, 10, 5_000, 500);
    const { logger } = started;
    expect(logger.at('error').join('\n')).toContain('LockAcquireTimeoutError');
  });
});
