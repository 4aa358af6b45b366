import { Inject, Injectable, Module } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import type { Redis } from 'ioredis';
import {
  LockOptionsError,
  LockService,
  Locked,
  RedisLockModule,
  type RedisLockModuleOptions,
} from '../../lib';
import { lockApp } from '../support/lock-app';
import type { TestRedis } from '../support/redis-server';
import { suiteRedis } from '../support/suite-redis';
import { sleep } from '../../tools/time';

let raw: Redis;

/** A locked service whose key names the app that ran it (see the keyspace events below). */
@Injectable()
class OrdersService {
  constructor(readonly locks: LockService) {}

  @Locked('order:<0.id>:<1>')
  async update(order: { id: number }, part: string) {
    return Promise.resolve(`${this.locks.current()!.key} ${order.id} ${part}`);
  }
}

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
