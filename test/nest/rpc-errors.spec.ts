import { Controller, type INestMicroservice } from '@nestjs/common';
import {
  ClientProxyFactory,
  MessagePattern,
  Payload,
  Transport,
  type ClientProxy,
} from '@nestjs/microservices';
import { firstValueFrom } from 'rxjs';
import { LockRedisError, LockService, Locked } from '../../lib';
import { freePort } from '../support/redis-server';
import { lockModule } from '../support/lock-app';
import { suiteRedis } from '../support/suite-redis';
import { CapturingLogger } from './nest-kit';

@Controller()
class OrdersHandler {
  @MessagePattern('pay')
  @Locked('order:<0.id>', { waitTime: 50 })
  async pay(@Payload() order: { id?: number }) {
    return Promise.resolve(order.id);
  }

  @MessagePattern('redis-down')
  async redisDown(): Promise<never> {
    const refused = new Error('connect ECONNREFUSED 127.0.0.1:6379');
    return Promise.reject(new LockRedisError('order:3', 'acquire', refused));
  }
}

describe('error mapping on a TCP microservice', () => {
  const server = suiteRedis();
  let service: INestMicroservice;
  let client: ClientProxy;
  let locks: LockService;
  const logger = new CapturingLogger();

  beforeAll(async () => {
    const port = await freePort();
    const { moduleRef } = await lockModule(server.redis, {}, { controllers: [OrdersHandler] });
    service = moduleRef.createNestMicroservice({
      transport: Transport.TCP,
      options: { host: '127.0.0.1', port },
      logger,
    });
    await service.listen();
    locks = service.get(LockService);
    client = ClientProxyFactory.create({
      transport: Transport.TCP,
      options: { host: '127.0.0.1', port },
    });
    await client.connect();
  });
  afterAll(async () => {
    await client?.close();
    await service?.close();
  });

  it('answers a busy lock with an RpcException-shaped error and a bad key with 400', async () => {
    const held = await locks.acquire('order:1', { leaseTime: 10_000 });
    const busy = await firstValueFrom(client.send('pay', { id: 1 })).catch(
      (error: unknown) => error,
    );
    await held.release();
    expect(busy).toEqual({
      status: 'error',
      statusCode: 409,
      message: 'The resource is locked by another operation.',
      error: 'Conflict',
      retryAfter: 10,
    });

    const bad = await firstValueFrom(client.send('pay', {})).catch((error: unknown) => error);
    expect(bad).toEqual({
      status: 'error',
      statusCode: 400,
      message: 'Invalid lock key argument.',
      error: 'Bad Request',
    });
    await expect(firstValueFrom(client.send('pay', { id: 2 }))).resolves.toBe(2);
    expect(logger.at('error')).toEqual([]);
  });

  it('answers a Redis failure with statusCode 503 and retryAfter 1', async () => {
    const down = await firstValueFrom(client.send('redis-down', {})).catch(
      (error: unknown) => error,
    );
    expect(down).toEqual({
      status: 'error',
      statusCode: 503,
      message: 'The lock service is unavailable.',
      error: 'Service Unavailable',
      retryAfter: 1,
    });
    expect(logger.at('error')).toEqual([]);
  });
});
