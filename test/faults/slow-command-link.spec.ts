import type { Redis } from 'ioredis';
import { permitsName } from '../../lib/stores/redis/redis-names';
import { lockApp, type LockApp } from '../support/lock-app';
import { startRedis, type TestRedis } from '../support/redis-server';
import { delayProxy } from './timing-kit';

/** How much later replies to script calls arrive than release notices, ms. */
const SLOW = 150;

describe('fault: a command link slower than the pub/sub link (its own redis-server)', () => {
  let redis: TestRedis;
  let raw: Redis;
  let proxy: Awaited<ReturnType<typeof delayProxy>>;
  let direct: LockApp;
  let slow: LockApp;

  beforeAll(async () => {
    redis = await startRedis({ control: true });
    raw = redis.client();
    // Replies to script calls come SLOW ms late, release notices at once: a notice can overtake
    // the reply to an attempt sent before it.
    proxy = await delayProxy(redis.port, SLOW, /evalsha|eval/i);
    direct = await lockApp(redis, { leaseTime: 30_000 });
    slow = await lockApp(redis, {
      redis: `redis://127.0.0.1:${proxy.port}`,
      keyPrefix: direct.prefix,
      leaseTime: 30_000,
      waitTime: 6_000,
    });
  });
  afterAll(async () => {
    await slow?.app.close();
    await direct?.app.close();
    await proxy?.close();
    raw?.disconnect();
    await redis?.stop();
  });

  it('a release notice that arrives while the head’s attempt takes the last permit wakes the next waiter', async () => {
    const held = direct.locks.semaphore('s', { permits: 2 });
    const [x, y] = [await held.acquire(), await held.acquire()];
    const zset = permitsName(`${direct.prefix}s`);
    const semaphore = slow.locks.semaphore('s', { permits: 2 });
    const first = semaphore.acquire();
    // The first waiter was refused and queued: its queue subscribed (the channel has a listener).
    const channel = `redisson_sc:{${direct.prefix}s}`;
    const deadline = Date.now() + 5_000;
    while (Number((await raw.pubsub('NUMSUB', channel))[1]) === 0) {
      if (Date.now() > deadline) throw new Error('the first waiter never subscribed');
    }
    const second = semaphore.acquire();
    await new Promise<void>((resolve) => setImmediate(resolve)); // it joined the queue
    await x.release(); // wakes the first waiter, whose attempt takes the last permit …
    while ((await raw.zcard(zset)) < 2) {
      if (Date.now() > deadline) throw new Error('the first waiter never took a permit');
    }
    // … and this release's notice reaches its process before that attempt's reply.
    await y.release();
    const taken = await first;
    // The free permit goes to the second waiter within its 6 s wait (not after the 30 s lease).
    const next = await second;
    await next.release();
    await taken.release();
  });
});
