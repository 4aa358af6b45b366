import {
  Controller,
  Get,
  Injectable,
  NotFoundException,
  Param,
  ParseIntPipe,
  Post,
  UseGuards,
  UseInterceptors,
  type CallHandler,
  type CanActivate,
  type ExecutionContext,
  type INestApplication,
  type NestInterceptor,
} from '@nestjs/common';
import type { Redis } from 'ioredis';
import { Observable, firstValueFrom, interval, map, take, tap, throwError } from 'rxjs';
import request from 'supertest';
import { LockError, LockKeyError, LockOptionsError, LockService, Locked } from '../../lib';
import { lockApp } from '../support/lock-app';
import { startRedis, type TestRedis } from '../support/redis-server';
import { sleep, until } from '../../tools/time';

let raw: Redis;

@Injectable()
class OrdersService {
  bodyRuns = 0;
  constructor(readonly locks: LockService) {}

  @Locked('order:pay:<0>')
  async pay(id: number) {
    this.bodyRuns++;
    const key = `order:pay:${id}`;
    const counter = `counter:${id}`;
    const value = Number((await raw.get(counter)) ?? 0);
    await sleep(2);
    await raw.set(counter, value + 1);
    return { key: this.locks.current()?.key, depth: this.locks.holdCount(key) };
  }

  @Locked('order:<0.id>:<1>')
  async update(order: { id: number }, part: string) {
    this.bodyRuns++;
    return Promise.resolve(`${this.locks.current()!.key} ${order.id} ${part}`);
  }

  @Locked({ key: (sku: string) => `stock:${sku.toUpperCase()}`, waitTime: 0 })
  async reserve(_sku: string) {
    return Promise.resolve(this.locks.current()!.key);
  }

  @Locked('feed:<0>')
  feed(id: string): Observable<number> {
    return interval(20).pipe(
      take(3),
      tap(() => this.observed.push(this.locks.holdCount(`feed:${id}`))),
    );
  }
  readonly observed: number[] = [];

  @Locked('feed:<0>')
  brokenFeed(_id: string): Observable<number> {
    return throwError(() => new Error('feed broke'));
  }
}

class CountingGuard implements CanActivate {
  static calls = 0;
  canActivate(): boolean {
    CountingGuard.calls++;
    return true;
  }
}

class CountingInterceptor implements NestInterceptor {
  static calls = 0;
  intercept(_context: ExecutionContext, next: CallHandler): Observable<unknown> {
    CountingInterceptor.calls++;
    return next.handle().pipe(map((body: unknown) => ({ intercepted: true, body })));
  }
}

@Controller('orders')
class OrdersController {
  constructor(private readonly orders: OrdersService) {}

  @Post(':id/pay')
  @Locked('order:pay:<0>')
  @UseGuards(CountingGuard)
  pay(@Param('id', ParseIntPipe) id: number) {
    return this.orders.pay(id);
  }

  @Locked('order:pay:<0>')
  @UseInterceptors(CountingInterceptor)
  @Post(':id/pay-again')
  payAgain(@Param('id', ParseIntPipe) id: number) {
    return this.orders.pay(id);
  }

  @Get(':id')
  @Locked('order:<0>')
  find(@Param('id') id: string): Promise<never> {
    return Promise.reject(new NotFoundException(`order ${id} does not exist`));
  }

  @Get(':id/feed')
  @Locked('feed:<0>')
  feed(@Param('id') id: string): Observable<string> {
    return interval(5).pipe(
      take(2),
      map((n) => `${id}-${n}`),
    );
  }
}

describe('@Locked', () => {
  let redis: TestRedis;
  let app: INestApplication;
  let orders: OrdersService;
  let prefix: string;
  /** Whether the lock of `key` exists in Redis (1) or not (0). */
  const exists = (key: string) => raw.exists(`${prefix}${key}`);

  beforeAll(async () => {
    redis = await startRedis();
    raw = redis.client();
    ({ app, prefix } = await lockApp(
      redis,
      {},
      { controllers: [OrdersController], providers: [OrdersService] },
    ));
    orders = app.get(OrdersService);
  });
  afterAll(async () => {
    await app.close();
    raw.disconnect();
    await redis.stop();
  });

  it('locks a route handler on the pipe-transformed argument, above or below @Post', async () => {
    const first = await request(app.getHttpServer()).post('/orders/42/pay').expect(201);
    expect(first.body).toEqual({ key: 'order:pay:42', depth: 2 });
    expect(CountingGuard.calls).toBe(1);
    const second = await request(app.getHttpServer()).post('/orders/42/pay-again').expect(201);
    expect(second.body).toEqual({ intercepted: true, body: { key: 'order:pay:42', depth: 2 } });
    expect(CountingInterceptor.calls).toBe(1);
    await request(app.getHttpServer()).post('/orders/abc/pay').expect(400);
  });

  it('keeps the method name and excludes concurrent HTTP requests', async () => {
    expect(OrdersController.prototype.pay.name).toBe('pay');
    await Promise.all(
      Array.from({ length: 12 }, () =>
        request(app.getHttpServer()).post('/orders/7/pay').expect(201),
      ),
    );
    expect(await raw.get('counter:7')).toBe('12');
  });

  it('lets an HttpException through unchanged', async () => {
    const response = await request(app.getHttpServer()).get('/orders/9').expect(404);
    expect(response.body.message).toBe('order 9 does not exist');
    expect(await raw.exists(`${prefix}order:9`)).toBe(0);
  });

  it('serves an Observable route handler', async () => {
    const response = await request(app.getHttpServer()).get('/orders/5/feed').expect(200);
    expect(response.text).toBe('5-1');
  });

  it('builds keys from property paths and key functions', async () => {
    await expect(orders.update({ id: 3 }, 'address')).resolves.toBe('order:3:address 3 address');
    await expect(orders.reserve('ab-1')).resolves.toBe('stock:AB-1');
  });

  it('holds the lock of an Observable method from subscription until complete', async () => {
    const feed = orders.feed('x');
    expect(await raw.exists(`${prefix}feed:x`)).toBe(0); // nothing happens before subscribing
    const values: number[] = [];
    const done = new Promise<void>((resolve) =>
      feed.subscribe({ next: (v) => values.push(v), complete: resolve }),
    );
    await until(async () => (await exists('feed:x')) === 1, 1_000);
    await done;
    expect(values).toEqual([0, 1, 2]);
    expect(orders.observed).toEqual([1, 1, 1]);
    await until(async () => (await exists('feed:x')) === 0, 1_000); // released after complete
  });

  it('releases an Observable method on unsubscribe and on error', async () => {
    const subscription = orders.feed('y').subscribe();
    await until(async () => (await exists('feed:y')) === 1, 1_000);
    subscription.unsubscribe();
    await until(async () => (await exists('feed:y')) === 0, 1_000); // released on unsubscribe
    await expect(firstValueFrom(orders.brokenFeed('z'))).rejects.toThrow('feed broke');
    expect(await raw.exists(`${prefix}feed:z`)).toBe(0);
  });

  it('rejects a bad argument value with LockKeyError before the body runs', async () => {
    const before = orders.bodyRuns;
    for (const bad of [undefined, null, '', Number.NaN, { id: 1 }, [1]]) {
      const error = await orders.pay(bad as unknown as number).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(LockKeyError);
      expect((error as Error).message).toContain('OrdersService.pay');
    }
    await expect(orders.update({} as { id: number }, 'x')).rejects.toThrow(
      /argument 0.id is undefined/,
    );
    await expect(orders.reserve(undefined as unknown as string)).rejects.toBeInstanceOf(TypeError);
    expect(orders.bodyRuns).toBe(before);
    expect(await raw.keys(`${prefix}*undefined*`)).toEqual([]);
  });

  it('fails at decoration time for a malformed template or an index past the parameters', () => {
    const decorate = (template: string) => () => {
      class Broken {
        @Locked(template)
        method(_a: string, _b: string) {
          return Promise.resolve();
        }
      }
      return Broken;
    };
    expect(decorate('order:<0')).toThrow(LockKeyError);
    expect(decorate('order:<2>')).toThrow(
      /refers to argument 2, but the method declares 2 parameters/,
    );
    expect(decorate('order:<a>')).toThrow(/not a placeholder/);
    expect(decorate('order:<0>')).not.toThrow();
    expect(() => Locked('k', { waitTime: -1 })).toThrow(LockOptionsError);
  });

  it('gives a clear error for an instance Nest did not create', async () => {
    const stray = new OrdersService(app.get(LockService));
    await expect(stray.pay(1)).rejects.toThrow(LockError);
    await expect(stray.pay(1)).rejects.toThrow(/no LockService is bound to this instance/);
  });
});
