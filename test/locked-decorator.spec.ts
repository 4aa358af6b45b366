import {
  Controller,
  Get,
  Inject,
  Injectable,
  Module,
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
import { Test } from '@nestjs/testing';
import type { Redis } from 'ioredis';
import { Observable, firstValueFrom, interval, map, take, tap, throwError } from 'rxjs';
import request from 'supertest';
import {
  LockError,
  LockKeyError,
  LockOptionsError,
  LockService,
  Locked,
  RedisLockModule,
  type RedisLockModuleOptions,
} from '../lib';
import { lockApp, sleep } from './support/lock-app';
import { startRedis, type TestRedis } from './support/redis-server';
import { suiteRedis } from './support/suite-redis';

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
    await sleep(30);
    expect(await raw.exists(`${prefix}feed:x`)).toBe(1);
    await done;
    expect(values).toEqual([0, 1, 2]);
    expect(orders.observed).toEqual([1, 1, 1]);
    await sleep(20);
    expect(await raw.exists(`${prefix}feed:x`)).toBe(0);
  });

  it('releases an Observable method on unsubscribe and on error', async () => {
    const subscription = orders.feed('y').subscribe();
    await sleep(30);
    expect(await raw.exists(`${prefix}feed:y`)).toBe(1);
    subscription.unsubscribe();
    await sleep(30);
    expect(await raw.exists(`${prefix}feed:y`)).toBe(0);
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

describe('RedisLockModule', () => {
  let redis: TestRedis;
  const server = suiteRedis();
  beforeAll(() => ({ redis, raw } = server));

  it('binds each app’s own LockService in two apps in one process', async () => {
    const a = await lockApp(redis, { keyPrefix: 'app-a:' }, { providers: [OrdersService] });
    const b = await lockApp(redis, { keyPrefix: 'app-b:' }, { providers: [OrdersService] });
    const seen: string[] = [];
    const spy = redis.client();
    await spy.config('SET', 'notify-keyspace-events', 'Kh');
    await spy.psubscribe('__keyspace@0__:app-*');
    spy.on('pmessage', (_p: string, channel: string) =>
      seen.push(channel.split(':').slice(1).join(':')),
    );
    await a.app.get(OrdersService).update({ id: 1 }, 'p');
    await b.app.get(OrdersService).update({ id: 2 }, 'q');
    await sleep(50);
    expect(seen).toContain('app-a:order:1:p');
    expect(seen).toContain('app-b:order:2:q');
    expect(seen.filter((key) => key.startsWith('app-b:order:1'))).toEqual([]);
    spy.disconnect();
    await a.app.close();
    await b.app.close();
  });

  const CONFIG = Symbol('CONFIG');
  @Module({
    providers: [{ provide: CONFIG, useFactory: () => ({ url: redis.url, prefix: 'async:' }) }],
    exports: [CONFIG],
  })
  class ConfigModule {}

  class OptionsFactory {
    create(): RedisLockModuleOptions {
      return { redis: redis.url, keyPrefix: 'class:' };
    }
  }

  it('forRootAsync with useFactory and an injected config', async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [
        RedisLockModule.forRootAsync({
          imports: [ConfigModule],
          inject: [CONFIG],
          useFactory: (config: { url: string; prefix: string }) => ({
            redis: config.url,
            keyPrefix: config.prefix,
          }),
        }),
      ],
      providers: [OrdersService],
    }).compile();
    const app = await moduleRef.createNestApplication({ logger: false }).init();
    await expect(app.get(OrdersService).update({ id: 1 }, 'f')).resolves.toBe('order:1:f 1 f');
    const lock = await app.get(LockService).acquire('probe');
    expect(await raw.exists('async:probe')).toBe(1);
    await lock.release();
    await app.close();
  });

  it('forRootAsync with useClass', async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [RedisLockModule.forRootAsync({ useClass: OptionsFactory })],
    }).compile();
    const app = await moduleRef.createNestApplication({ logger: false }).init();
    const lock = await app.get(LockService).acquire('probe');
    expect(await raw.exists('class:probe')).toBe(1);
    await lock.release();
    await app.close();
  });

  it('is global by default; isGlobal: false needs an explicit import', async () => {
    @Injectable()
    class NeedsLocks {
      constructor(@Inject(LockService) readonly locks: LockService) {}
    }
    @Module({ providers: [NeedsLocks] })
    class FeatureModule {}
    const globalRef = await Test.createTestingModule({
      imports: [RedisLockModule.forRoot({ redis: redis.url }), FeatureModule],
    }).compile();
    expect(globalRef.get(NeedsLocks).locks).toBeInstanceOf(LockService);
    await globalRef.close();
    await expect(
      Test.createTestingModule({
        imports: [RedisLockModule.forRoot({ redis: redis.url, isGlobal: false }), FeatureModule],
      }).compile(),
    ).rejects.toThrow(/can't resolve dependencies of the NeedsLocks/);
  });

  it('fails at startup on invalid options, naming the option', async () => {
    const start = (options: RedisLockModuleOptions) =>
      Test.createTestingModule({ imports: [RedisLockModule.forRoot(options)] }).compile();
    await expect(start({ redis: 'http://localhost' })).rejects.toThrow(/Invalid option "redis"/);
    await expect(start({ redis: redis.url, leaseTime: 5 })).rejects.toThrow(
      /Invalid option "leaseTime"/,
    );
    await expect(
      start({ redis: redis.url, leasetime: 100 } as RedisLockModuleOptions),
    ).rejects.toThrow(/did you mean "leaseTime"/);
    await expect(start({})).rejects.toBeInstanceOf(LockOptionsError);
  });

  it('uses a client it was given and leaves it open on shutdown', async () => {
    const client = redis.client();
    const moduleRef = await Test.createTestingModule({
      imports: [RedisLockModule.forRoot({ client, keyPrefix: 'own:' })],
    }).compile();
    const app = await moduleRef.createNestApplication({ logger: false }).init();
    await app.get(LockService).run('k', () => undefined);
    await app.close();
    expect(client.status).toBe('ready');
    expect(await client.ping()).toBe('PONG');
    client.disconnect();
  });
});
