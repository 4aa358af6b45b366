import 'reflect-metadata';
import { Test } from '@nestjs/testing';
import { Injectable } from '@nestjs/common';
import { RedisLockModule, LockService, Locked } from '../lib';
import { startRedis, TestRedis } from './support/redis-server';

@Injectable()
class Svc {
  constructor(readonly locks: LockService) {}
  @Locked('k:<0>')
  async outer(id: string) { return this.inner(id); }
  @Locked('k:<0>')
  async inner(id: string) { return this.locks.holdCount('k:' + id); }
}

describe('smoke', () => {
  let redis: TestRedis;
  beforeAll(async () => { redis = await startRedis(); });
  afterAll(async () => { await redis.stop(); });
  it('works', async () => {
    const mod = await Test.createTestingModule({ imports: [RedisLockModule.forRoot({ redis: redis.url, leaseTime: 300 })], providers: [Svc] }).compile();
    const app = mod.createNestApplication(); await app.init();
    const locks = app.get(LockService);
    const svc = app.get(Svc);
    expect(await svc.outer('a')).toBe(2);
    let counter = 0; let t = Date.now();
    const c = redis.client();
    await Promise.all(Array.from({ length: 50 }, () => locks.run('cnt-lock', async () => { const v = Number(await c.get('cnt') ?? 0); await c.set('cnt', v + 1); counter++; })));
    expect(await c.get('cnt')).toBe('50');
    console.log('50 contended in', Date.now() - t);
    const h = await locks.acquire('wd');
    await new Promise(r => setTimeout(r, 1000));
    expect(h.signal.aborted).toBe(false);
    expect(await locks.isLocked('wd')).toBe(true);
    await h.release();
    expect(await locks.isLocked('wd')).toBe(false);
    c.disconnect();
    await app.close();
  });
});
