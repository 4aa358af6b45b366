import { spawn } from 'node:child_process';
import { createServer, Socket, type Server } from 'node:net';
import { join } from 'node:path';
import type { INestApplication } from '@nestjs/common';
import type { Redis } from 'ioredis';
import { LockLostError, LockRedisError, type LockService } from '../../lib';
import { lockApp, sleep, until } from '../support/lock-app';
import { freePort, startRedis, type TestRedis } from '../support/redis-server';

const LEASE = 600;
const unhandled: unknown[] = [];
const onUnhandled = (reason: unknown) => unhandled.push(reason);

/** ioredis options that reconnect fast and fail commands instead of queueing them for long. */
const fastRedis = (port: number) => ({
  host: '127.0.0.1',
  port,
  retryStrategy: () => 50,
  maxRetriesPerRequest: 1,
  connectTimeout: 500,
});

describe('faults (each test its own redis-server)', () => {
  let redis: TestRedis;
  let raw: Redis;
  let app: INestApplication;
  let locks: LockService;
  let lost: LockLostError[];
  let prefix: string;

  beforeAll(() => process.on('unhandledRejection', onUnhandled));
  afterAll(() => process.off('unhandledRejection', onUnhandled));
  beforeEach(async () => {
    redis = await startRedis({ control: true });
    raw = redis.client();
    raw.on('error', () => undefined);
    ({ app, locks, prefix } = await lockApp(redis, {
      redis: fastRedis(redis.port),
      leaseTime: LEASE,
    }));
    lost = [];
    locks.lockLost$.subscribe((error) => lost.push(error));
  });
  afterEach(async () => {
    await app.close();
    raw.disconnect();
    await redis.stop();
    expect(unhandled).toEqual([]);
  });

  /** Normal service: a lock can be taken and released again. */
  async function serviceWorks() {
    const lock = await locks.acquire(`after:${Math.random()}`, { waitTime: 1_000 });
    await lock.release();
  }

  it('Redis restarted without persistence while a lock is held: loss signalled within a lease', async () => {
    const lock = await locks.acquire('restart');
    await redis.kill();
    const killedAt = Date.now();
    await redis.restart();
    await until(() => lock.signal.aborted, LEASE * 2);
    expect(Date.now() - killedAt).toBeLessThan(LEASE * 2);
    expect(lock.signal.reason).toBeInstanceOf(LockLostError);
    expect(lost.map((e) => e.key)).toEqual(['restart']);
    await expect(lock.release()).rejects.toBeInstanceOf(LockLostError);
    const back = Date.now();
    await serviceWorks();
    expect(Date.now() - back).toBeLessThan(1_000);
  });

  it('Redis paused (SIGSTOP) longer than the lease: the holder is told, others get the lock after', async () => {
    const lock = await locks.acquire('paused');
    redis.pause();
    await sleep(LEASE * 2);
    redis.resume();
    await until(() => lock.signal.aborted, LEASE);
    expect(lock.signal.reason).toBeInstanceOf(LockLostError);
    const other = await lockApp(redis, {
      redis: fastRedis(redis.port),
      keyPrefix: 'x',
      leaseTime: LEASE,
    });
    try {
      // The paused Redis measured the lease by its clock: the key is expired after resume.
      const next = await other.locks.acquire('paused', { waitTime: 2_000 });
      await next.release();
    } finally {
      await other.app.close();
    }
    await lock.release().catch(() => undefined);
  });

  it('a SIGKILLed holder process: others get the lock within its lease plus a margin', async () => {
    const child = spawn(
      process.execPath,
      [
        '-r',
        'ts-node/register/transpile-only',
        join(__dirname, 'holder-child.ts'),
        redis.url,
        `${prefix}killed`,
        String(LEASE),
      ],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    try {
      await new Promise<void>((resolve) =>
        child.stdout.on('data', (d: Buffer) => d.toString().includes('held') && resolve()),
      );
      expect(await locks.tryAcquire('killed')).toBeNull();
    } finally {
      child.kill('SIGKILL');
    }
    const killedAt = Date.now();
    const lock = await locks.acquire('killed', { waitTime: 5_000 });
    expect(Date.now() - killedAt).toBeLessThan(LEASE + 500);
    await lock.release();
  }, 30_000);

  it('SCRIPT FLUSH mid-run is handled transparently (NOSCRIPT → load → retry)', async () => {
    for (let i = 0; i < 5; i++) {
      await locks.run('flush', async () => {
        await raw.script('FLUSH');
      });
      await raw.script('FLUSH');
    }
    const held = await locks.acquire('flush');
    await raw.script('FLUSH');
    await held.release();
    expect(await raw.exists('flush')).toBe(0);
  });

  it('the pub/sub connection dropped while waiters wait: they still get the lock', async () => {
    const held = await locks.acquire('pubsub');
    const other = await lockApp(redis, {
      redis: fastRedis(redis.port),
      keyPrefix: '',
      leaseTime: 30_000,
    });
    try {
      const waiters = [1, 2, 3].map(() => other.locks.acquire('pubsub', { waitTime: 10_000 }));
      await sleep(100);
      await raw.client('KILL', 'TYPE', 'pubsub');
      await held.release();
      for (const waiter of waiters) await (await waiter).release();
    } finally {
      await other.app.close();
    }
  });

  it.each([
    [
      'OOM',
      async (r: Redis) => void (await r.config('SET', 'maxmemory', '1')),
      async (r: Redis) => void (await r.config('SET', 'maxmemory', '0')),
    ],
    [
      'READONLY',
      async (r: Redis) => void (await r.replicaof('127.0.0.1', '1')),
      async (r: Redis) => void (await r.replicaof('NO', 'ONE')),
    ],
  ])('Redis answering %s: a typed LockRedisError, no hang', async (name, breakIt, fixIt) => {
    await breakIt(raw);
    try {
      const error = await locks
        .acquire(`refused:${name}`, { waitTime: 1_000 })
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(LockRedisError);
      expect((error as Error).message).toContain(name);
    } finally {
      await fixIt(raw);
    }
    await serviceWorks();
  });

  it('ACL denied: a typed LockRedisError naming the permission problem', async () => {
    await raw.acl('SETUSER', 'weak', 'on', '>pw', '~*', '&*', '-@all', '+ping', '+subscribe');
    const weak = await lockApp(redis, {
      redis: { ...fastRedis(redis.port), username: 'weak', password: 'pw' },
      leaseTime: LEASE,
    });
    try {
      const error = await weak.locks.acquire('acl', { waitTime: 0 }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(LockRedisError);
      expect((error as Error).message).toMatch(/NOPERM|no permissions/i);
    } finally {
      await weak.app.close();
    }
  });

  it('the minimal ACL in docs/reliability.md is enough for every operation', async () => {
    await raw.acl(
      'SETUSER',
      'locker',
      'on',
      '>pw',
      '~*',
      '&*',
      '-@all',
      '+evalsha',
      '+script|load',
      '+exists',
      '+pttl',
      '+subscribe',
      '+unsubscribe',
      '+ping',
      '+publish',
      '+hset',
      '+hget',
      '+hexists',
      '+hincrby',
      '+pexpire',
      '+incr',
      '+del',
      '+get',
      '+set',
      '+quit',
      '+info',
    );
    const limited = await lockApp(redis, {
      redis: { ...fastRedis(redis.port), username: 'locker', password: 'pw' },
      leaseTime: LEASE,
    });
    try {
      const held = await limited.locks.acquire('acl-ok');
      const waiter = limited.locks.run('acl-ok', () => 'waited', { waitTime: 5_000 });
      await sleep(LEASE); // a watchdog renewal happens meanwhile
      expect(await limited.locks.isLocked('acl-ok')).toBe(true);
      expect(await limited.locks.remainingTtl('acl-ok')).toBeGreaterThan(0);
      await held.release();
      await expect(waiter).resolves.toBe('waited');
      const forced = await limited.locks.acquire('acl-force', { leaseTime: 5_000 });
      expect(await limited.locks.forceUnlock('acl-force')).toBe(true);
      await expect(forced.release()).rejects.toBeInstanceOf(LockLostError);
    } finally {
      await limited.app.close();
    }
  });

  it('the connection cut and restored through a proxy: holder keeps the lock, waiters recover', async () => {
    const proxy = await tcpProxy(redis.port);
    const viaProxy = await lockApp(redis, {
      redis: fastRedis(proxy.port),
      keyPrefix: '',
      leaseTime: 3_000,
    });
    try {
      const held = await viaProxy.locks.acquire('proxied');
      const waiter = locks.acquire('proxied', { waitTime: 10_000 });
      proxy.cut();
      await sleep(300);
      proxy.restore();
      await sleep(300);
      expect(held.signal.aborted).toBe(false);
      await held.release();
      await (await waiter).release();
      const again = await viaProxy.locks.acquire('proxied', { waitTime: 2_000 });
      await again.release();
    } finally {
      await viaProxy.app.close();
      await proxy.close();
    }
  });
});

/** A loopback TCP proxy to `target` whose connections can be cut (and refused) at will. */
async function tcpProxy(target: number) {
  const port = await freePort();
  const sockets = new Set<Socket>();
  let open = true;
  const server: Server = createServer((client) => {
    if (!open) {
      client.destroy();
      return;
    }
    const upstream = new Socket();
    upstream.connect(target, '127.0.0.1');
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('error', () => undefined);
      socket.on('close', () => sockets.delete(socket));
    }
    client.pipe(upstream).pipe(client);
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return {
    port,
    cut() {
      open = false;
      for (const socket of sockets) socket.destroy();
    },
    restore() {
      open = true;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
