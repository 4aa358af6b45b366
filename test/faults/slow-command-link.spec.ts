import { createServer, Socket, type Server } from 'node:net';
import type { Redis } from 'ioredis';
import { permitsName } from '../../lib/engine/redis/redis-names';
import { lockApp, type LockApp } from '../support/lock-app';
import { startRedis, type TestRedis } from '../support/redis-server';

/** How much later replies to script calls arrive than release notices, ms. */
const SLOW = 150;

/**
 * A TCP proxy to `target` that delays by SLOW ms the replies on every connection that has sent
 * a script call (EVALSHA/EVAL): the command link is slow, the pub/sub link is not, so a release
 * notice can overtake the reply to an attempt sent before it.
 */
async function slowCommandProxy(target: number): Promise<{ url: string; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    const upstream = new Socket();
    let scripts = false;
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('error', () => undefined);
      socket.on('close', () => {
        sockets.delete(socket);
        client.destroy();
        upstream.destroy();
      });
    }
    upstream.connect(target, '127.0.0.1');
    client.on('data', (data: Buffer) => {
      scripts ||= /evalsha|eval/i.test(data.toString('latin1'));
      upstream.write(data);
    });
    // A constant delay keeps the replies in order.
    upstream.on('data', (data: Buffer) => {
      if (scripts) setTimeout(() => client.write(data), SLOW);
      else client.write(data);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `redis://127.0.0.1:${port}`,
    close: () => {
      for (const socket of sockets) socket.destroy();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

describe('fault: a command link slower than the pub/sub link (its own redis-server)', () => {
  let redis: TestRedis;
  let raw: Redis;
  let proxy: Awaited<ReturnType<typeof slowCommandProxy>>;
  let direct: LockApp;
  let slow: LockApp;

  beforeAll(async () => {
    redis = await startRedis({ control: true });
    raw = redis.client();
    proxy = await slowCommandProxy(redis.port);
    direct = await lockApp(redis, { leaseTime: 30_000 });
    slow = await lockApp(redis, {
      redis: proxy.url,
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
