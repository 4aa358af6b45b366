import { Body, Controller, Injectable, Param, Post, type INestApplication } from '@nestjs/common';
import request from 'supertest';
import { LockService, Locked } from '../../lib';
import { suiteRedis } from '../support/suite-redis';
import { httpApp } from './nest-kit';

@Injectable()
class PaymentsService {
  // Waits forever when busy: a call that waited for its own chain's lock would never answer.
  @Locked('order:<0>', { waitTime: Infinity })
  settle(id: string) {
    return Promise.resolve({ settled: id });
  }
}

@Controller('orders')
class OrdersController {
  constructor(
    private readonly locks: LockService,
    private readonly payments: PaymentsService,
  ) {}

  @Post(':id/pay')
  @Locked('order:<0>', { waitTime: 50 })
  async pay(@Param('id') id: string) {
    return Promise.resolve({ paid: id });
  }

  @Post(':id/settle')
  async settle(@Param('id') id: string) {
    await using _lock = await this.locks.acquire(`order:${id}`);
    return await this.payments.settle(id); // the same key, outside runAs, held: a self-deadlock
  }

  @Post('update')
  @Locked('order:<0.id>', { waitTime: 50 })
  async update(@Body() order: { id?: string }) {
    return Promise.resolve({ updated: order.id });
  }
}

// What a busy, self-deadlocked or badly keyed call answers, and what it logs.
describe('busy answers over HTTP', () => {
  const server = suiteRedis();
  let app: INestApplication;
  let locks: LockService;
  let logger: Awaited<ReturnType<typeof httpApp>>['logger'];

  beforeEach(async () => {
    ({ app, logger } = await httpApp(
      'express',
      server.redis,
      {},
      { controllers: [OrdersController], providers: [PaymentsService] },
    ));
    locks = app.get(LockService);
  });
  afterEach(() => app.close());

  it('Retry-After follows recent hold times (about 1 s for short holds), not the holder’s 30 s lease', async () => {
    for (let i = 0; i < 5; i++)
      await request(app.getHttpServer()).post('/orders/7/pay').expect(201);
    const held = await locks.acquire('order:7', { leaseTime: 30_000 });
    const response = await request(app.getHttpServer()).post('/orders/7/pay').expect(409);
    await held.release();
    // The holds took milliseconds (1 s once rounded); a margin for a loaded machine, far below 30.
    expect(Number(response.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(Number(response.headers['retry-after'])).toBeLessThanOrEqual(5);
    // A contention answer (another chain holds it) never points at runAs.
    const answered = logger.at('debug').filter((line) => line.startsWith('Answered 409'));
    expect(answered).toHaveLength(1);
    expect(answered[0]).toContain('another call chain of this process');
    expect(answered[0]).not.toContain('runAs');
  });

  it('a chain calling @Locked on the key of its own acquire() handle fails at once: 500, ERROR log naming runAs', async () => {
    const response = await request(app.getHttpServer()).post('/orders/8/settle').expect(500);
    expect(response.body).toEqual({ statusCode: 500, message: 'Internal server error' });
    const errors = logger.at('error').join('\n');
    expect(errors).toContain('LockSelfDeadlockError');
    expect(errors).toContain('locks.runAs(handle');
    expect(await locks.isLocked('order:8')).toBe(false); // the handle was released
  });

  it('a value missing from the request answers 400 and logs its cause at WARN, once per method', async () => {
    for (let i = 0; i < 2; i++) {
      await request(app.getHttpServer()).post('/orders/update').send({}).expect(400);
    }
    const warned = logger.at('warn').filter((line) => line.includes('OrdersController.update'));
    expect(warned).toHaveLength(1);
    expect(warned[0]).toContain('argument 0.id is undefined');
    expect(logger.at('error')).toEqual([]);
  });
});
