import { monitorEventLoopDelay } from 'node:perf_hooks';
import { Test } from '@nestjs/testing';
import type { Redis, RedisOptions } from 'ioredis';
import {
  LockError,
  LockRedisError,
  LockService,
  RedisLockModule,
  type LockHandle,
  type RedisLockModuleOptions,
} from '../../lib';
import { parseCommandstats } from '../../tools/redis/topology-admin';
import { freePort, startRedis, type TestRedis } from '../support/redis-server';
import {
  captureLogger,
  fastRedis,
  faultRedis,
  lockNode,
  logged,
  settled,
  tcpProxy,
  watchUnhandledRejections,
  type LockNode,
  type TcpProxy,
} from './fault-kit';
import { until } from '../../tools/time';

/** The module's default lease: an attempt's bound used to be a third of it (10 s). */
const DEFAULT_LEASE = 30_000;
/** What a call may take beyond its wait: timers and the event loop under CI load. */
const MARGIN = 100;

const monotonic = () => performance.now();

/**
 * Watches this process's event loop from now on; the returned function stops and gives the
 * longest stall seen, ms. A bound is its wait + MARGIN + that stall: on a loaded machine the
 * process itself is held up (under load 10 a waiter once answered 8 ms past a bare margin), and
 * that is not the library's doing, while a retry or a lost wake-up would overshoot by far more.
 */
function watchStalls(): () => number {
  const delay = monitorEventLoopDelay({ resolution: 10 });
  delay.enable();
  let stalled: number | undefined;
  return () => {
    if (stalled === undefined) {
      delay.disable();
      stalled = delay.max / 1e6;
    }
    return stalled;
  };
}

/** The `code` of a LockRedisError's cause (e.g. ECONNREFUSED). */
const causeCode = (error: unknown) =>
  ((error as Error).cause as { code?: string } | undefined)?.code;

/** The node's command connection (to await its state). */
const commandClient = (node: LockNode) =>
  (node.locks as unknown as { store: { client: Redis } }).store.client;

/**
 * Boots RedisLockModule on `redis`: the bootstrap's outcome, how long app.init() took and the
 * longest event-loop stall meanwhile, ms (see watchStalls).
 */
async function boot(redis: RedisOptions, options: Partial<RedisLockModuleOptions> = {}) {
  const moduleRef = await Test.createTestingModule({
    imports: [RedisLockModule.forRoot({ ...options, redis })],
  }).compile();
  const app = moduleRef.createNestApplication({ logger: captureLogger });
  const stalls = watchStalls();
  const started = monotonic();
  const outcome = await settled(app.init());
  return { app, outcome, took: monotonic() - started, stalled: stalls() };
}

describe('Redis down at startup: refused at once, unanswered bounded', () => {
  watchUnhandledRejections();

  it("checkOnStartup 'fail' on a closed port fails the bootstrap within 1 s, naming the address and ECONNREFUSED", async () => {
    const port = await freePort();
    const { outcome, took, stalled } = await boot({ host: '127.0.0.1', port });
    expect(outcome).toBeInstanceOf(LockError);
    expect((outcome as Error).message).toMatch(
      new RegExp(`^Cannot reach Redis at 127\\.0\\.0\\.1:${port}: connect ECONNREFUSED`),
    );
    expect(took).toBeLessThan(1_000 + stalled);
  });

  it("checkOnStartup 'warn' on a closed port does not delay the bootstrap and warns within 1 s", async () => {
    const port = await freePort();
    const { app, outcome, took, stalled } = await boot(
      { host: '127.0.0.1', port },
      { checkOnStartup: 'warn' },
    );
    try {
      expect(outcome).toBe(app);
      const warning = () =>
        logged.find((line) => line.message.startsWith(`Cannot reach Redis at 127.0.0.1:${port}`));
      await until(() => warning() !== undefined, 1_000);
      expect(warning()!.message).toMatch(/ECONNREFUSED.*Lock calls fail until it is reachable/);
      expect(took).toBeLessThan(1_000 + stalled);
      // Lock calls fail at once meanwhile, with the cause.
      const error = await settled(app.get(LockService).tryAcquire('boot'));
      expect(error).toBeInstanceOf(LockRedisError);
      expect(causeCode(error)).toBe('ECONNREFUSED');
    } finally {
      await app.close();
    }
  });

  it('a refused password fails the bootstrap within 1 s, naming the address and the refusal', async () => {
    const redis = await startRedis({ control: true });
    try {
      const { outcome, took, stalled } = await boot({
        host: '127.0.0.1',
        port: redis.port,
        username: 'nobody',
        password: 'wrong',
      });
      expect(outcome).toBeInstanceOf(LockError);
      expect((outcome as Error).message).toMatch(
        new RegExp(`^Cannot reach Redis at 127\\.0\\.0\\.1:${redis.port}: WRONGPASS`),
      );
      expect(took).toBeLessThan(1_000 + stalled);
    } finally {
      await redis.stop();
    }
  });
});

describe('Redis down while the application runs: lock calls fail fast, nothing sent late (its own redis-server)', () => {
  const server = faultRedis();
  let redis: TestRedis;
  let raw: Redis;
  let node: LockNode;

  beforeAll(async () => {
    ({ redis, raw } = server);
    node = await server.node(fastRedis(redis.port), { leaseTime: DEFAULT_LEASE });
  });

  it('tryAcquire fails at once and acquire within its waitTime, with LockRedisError (ECONNREFUSED); once Redis is back the next call works and none of the outage was sent', async () => {
    await (await node.locks.acquire('warm')).release();
    await redis.kill();
    await until(() => commandClient(node).status !== 'ready', 1_000);
    // Its reconnect was refused (before that, the cause is only that the connection closed).
    const refused = `Redis command connection error: connect ECONNREFUSED 127.0.0.1:${redis.port}`;
    await until(() => logged.some((line) => line.message === refused), 1_000);

    const stalls = watchStalls();
    let started = monotonic();
    const tried = await settled(node.locks.tryAcquire('down:try'));
    const tryTook = monotonic() - started;
    started = monotonic();
    const waited = await settled(node.locks.acquire('down:wait', { waitTime: 500 }));
    const waitTook = monotonic() - started;
    started = monotonic();
    const ran = await settled(node.locks.run('down:run', () => 'ran', { waitTime: 300 }));
    const runTook = monotonic() - started;

    await redis.restart();
    const restartedAt = monotonic();
    const next = await node.locks.acquire('down:next', { waitTime: 1_000 });
    const resumeTook = monotonic() - restartedAt;
    // Anything the outage's calls left queued was written before this call: none reached Redis.
    const stats = parseCommandstats(await raw.info('commandstats'));
    await next.release();

    expect({
      tried: [tried instanceof LockRedisError, causeCode(tried)],
      waited: [waited instanceof LockRedisError, causeCode(waited)],
      ran: [ran instanceof LockRedisError, causeCode(ran)],
    }).toEqual({
      tried: [true, 'ECONNREFUSED'],
      waited: [true, 'ECONNREFUSED'],
      ran: [true, 'ECONNREFUSED'],
    });
    expect(tryTook).toBeLessThan(MARGIN + stalls());
    expect(waitTook).toBeLessThan(500 + MARGIN + stalls());
    expect(runTook).toBeLessThan(300 + MARGIN + stalls());
    expect(resumeTook).toBeLessThan(1_000);
    // The one acquire after the restart: its EVALSHA (NOSCRIPT, then again after SCRIPT LOAD).
    expect(stats.evalsha ?? 0).toBeLessThanOrEqual(2);
    expect(await raw.keys(`${node.prefix}down:*`)).toEqual([]);
  });

  /**
   * Runs `use` with a lock node behind a TCP proxy to the server (`node`'s key prefix, its
   * scripts loaded), closing both after it.
   */
  async function proxiedNode(use: (viaProxy: LockNode, proxy: TcpProxy) => Promise<void>) {
    const proxy = await tcpProxy(redis.port);
    const viaProxy = await lockNode(fastRedis(proxy.port), {
      keyPrefix: node.prefix,
      leaseTime: DEFAULT_LEASE,
    });
    try {
      await (await viaProxy.locks.acquire('proxied:warm')).release();
      await use(viaProxy, proxy);
    } finally {
      await viaProxy.close();
      await proxy.close();
    }
  }

  it('an acquire in flight when the connection breaks fails within its waitTime, and what Redis granted it is freed once the connection is back', async () => {
    await proxiedNode(async (viaProxy, proxy) => {
      const name = `${node.prefix}inflight`;
      proxy.dropReplies();
      const stalls = watchStalls();
      const started = monotonic();
      const acquiring = settled(viaProxy.locks.acquire('inflight', { waitTime: 400 }));
      await until(async () => (await raw.exists(name)) === 1, 1_000); // Redis granted it
      proxy.cut(); // the connection breaks with the answer lost; reconnects are refused
      const outcome = await acquiring;
      const took = monotonic() - started;
      proxy.restore();
      await until(async () => (await raw.exists(name)) === 0, 2_000);
      expect(outcome).toBeInstanceOf(LockRedisError);
      expect(took).toBeLessThan(400 + MARGIN + stalls());
    });
  });

  it('an acquire its client resends after a reconnect is freed before a call made once the connection is back', async () => {
    // The acquire's answer is lost and the connection breaks: the caller gets an error, and
    // ioredis resends the acquire once reconnected, which takes the lock again for nobody. The
    // attempt's cleanup must free it before what this process sends next: else a caller
    // whose wait ends just after Redis came back is told "busy" by a hold nobody has.
    await proxiedNode(async (viaProxy, proxy) => {
      const name = `${node.prefix}resent`;
      proxy.dropReplies();
      const acquiring = settled(viaProxy.locks.acquire('resent', { waitTime: 400 }));
      await until(async () => (await raw.exists(name)) === 1, 1_000); // Redis granted it
      proxy.cut();
      expect(await acquiring).toBeInstanceOf(LockRedisError);
      // The first call after the reconnect, made in the step after the connection's 'ready'.
      const connection = commandClient(viaProxy);
      const probe = new Promise<unknown>((resolve) => {
        const ready = () => {
          connection.off('ready', ready);
          setImmediate(() => resolve(settled(viaProxy.locks.tryAcquire('resent'))));
        };
        connection.on('ready', ready);
      });
      proxy.restore();
      const got = await probe;
      expect(got).toEqual(expect.objectContaining({ key: 'resent' }));
      await (got as LockHandle).release();
      expect(await raw.exists(name)).toBe(0);
    });
  });

  it('a waiter parked before the outage ends within its wait with LockRedisError; a holder finishing during it is not held up', async () => {
    const held = await node.locks.acquire('parked');
    const waiter = await lockNode(fastRedis(redis.port), {
      keyPrefix: node.prefix,
      leaseTime: DEFAULT_LEASE,
    });
    try {
      const stalls = watchStalls();
      const started = monotonic();
      const waiting = settled(waiter.locks.acquire('parked', { waitTime: 800 }));
      await until(
        async () =>
          (await raw.pubsub('NUMSUB', `redisson_lock__channel:{${node.prefix}parked}`))[1] === 1,
        1_000,
      );
      await redis.kill();
      const outcome = await waiting;
      const took = monotonic() - started;
      const releasing = monotonic();
      await held.release().catch(() => undefined);
      const releaseTook = monotonic() - releasing;
      await redis.restart();
      expect(outcome).toBeInstanceOf(LockRedisError);
      expect(took).toBeLessThan(800 + MARGIN + stalls());
      expect(releaseTook).toBeLessThan(MARGIN + stalls());
      const again = await waiter.locks.acquire('parked', { waitTime: 1_000 });
      await again.release();
    } finally {
      await waiter.close();
    }
  });
});
