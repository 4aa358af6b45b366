/**
 * Shared tools of the fault-injection suites: fast-reconnecting LockService instances, a log
 * capture, an unhandled-rejection watch and a loopback TCP proxy whose connections can be cut
 * or stalled.
 */
import type { INestApplication, LoggerService } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { randomUUID } from 'node:crypto';
import { createServer, Socket, type Server } from 'node:net';
import type { Redis, RedisOptions } from 'ioredis';
import {
  LockService,
  RedisLockModule,
  type LockLostError,
  type RedisLockModuleOptions,
} from '../../lib';
import { freePort, startRedis, type TestRedis } from '../support/redis-server';
import { sleep } from '../../tools/time';

/** The watchdog lease of the fault suites, ms: short so that faults outlast it quickly. */
export const LEASE = 600;
/** The watchdog renews every third of the lease. */
export const RENEW_PERIOD = Math.floor(LEASE / 3);

/**
 * ioredis options that reconnect every 50 ms. Commands sent while disconnected are kept
 * (ioredis' default of 20 reconnect attempts per command), so a short outage is bridged.
 */
export const fastRedis = (port: number, extra: RedisOptions = {}): RedisOptions => ({
  host: '127.0.0.1',
  port,
  retryStrategy: () => 50,
  connectTimeout: 500,
  ...extra,
});

/** Every message the library logged (through Nest's Logger) in this test file. */
export const logged: { level: string; message: string }[] = [];

/** Nest logger that records instead of printing; shared by every app of a test file. */
export const captureLogger: LoggerService = {
  log: () => undefined,
  debug: () => undefined,
  verbose: () => undefined,
  warn: (message: unknown) => logged.push({ level: 'warn', message: String(message) }),
  error: (message: unknown) => logged.push({ level: 'error', message: String(message) }),
};

/** How many log lines reported the loss of lock `key`. */
export const lossLogLines = (key: string) =>
  logged.filter((l) => l.message.startsWith(`Lock "${key}" was lost while held`)).length;

/** One LockService in its own Nest application, with what its lockLost$ emitted. */
export interface LockNode {
  app: INestApplication;
  locks: LockService;
  prefix: string;
  lost: LockLostError[];
  close(): Promise<void>;
}

/**
 * A Nest application with RedisLockModule on `redis` (ioredis options), under `keyPrefix` (a
 * fresh one unless given), with lease LEASE unless given.
 */
export async function lockNode(
  redis: RedisOptions,
  options: Omit<Partial<RedisLockModuleOptions>, 'redis' | 'client'> = {},
): Promise<LockNode> {
  const prefix = options.keyPrefix ?? `f:${randomUUID().slice(0, 8)}:`;
  const moduleRef = await Test.createTestingModule({
    imports: [RedisLockModule.forRoot({ leaseTime: LEASE, ...options, redis, keyPrefix: prefix })],
  }).compile();
  const app = moduleRef.createNestApplication({ logger: captureLogger });
  await app.init();
  const locks = app.get(LockService);
  const lost: LockLostError[] = [];
  locks.lockLost$.subscribe((error) => lost.push(error));
  let closed = false;
  return {
    app,
    locks,
    prefix,
    lost,
    async close() {
      if (closed) return;
      closed = true;
      await app.close();
    },
  };
}

/** What twoLockNodes() starts. */
export interface TwoLockNodes {
  readonly redis: TestRedis;
  readonly raw: Redis;
  readonly a: LockNode;
  readonly b: LockNode;
}

/**
 * Jest hooks for a fault suite: its own controllable redis-server (kill, pause, restart), a raw
 * client, and two lock nodes `a` and `b` on it under one key prefix, all stopped after the suite,
 * and watchUnhandledRejections(). `made` gets them once started (assign the suite's variables
 * there); or read the returned fields inside hooks and tests.
 */
export function twoLockNodes(
  options: Parameters<typeof lockNode>[1] = {},
  made?: (nodes: TwoLockNodes) => void,
): TwoLockNodes {
  watchUnhandledRejections();
  let redis: TestRedis | undefined;
  let raw: Redis | undefined;
  let a: LockNode | undefined;
  let b: LockNode | undefined;
  beforeAll(async () => {
    redis = await startRedis({ control: true });
    raw = redis.client();
    raw.on('error', () => undefined); // the suite kills and restarts the server
    a = await lockNode(fastRedis(redis.port), options);
    b = await lockNode(fastRedis(redis.port), { ...options, keyPrefix: a.prefix });
    made?.({ redis, raw, a, b });
  });
  afterAll(async () => {
    await a?.close();
    await b?.close();
    raw?.disconnect();
    await redis?.stop();
  });
  return {
    get redis() {
      return redis!;
    },
    get raw() {
      return raw!;
    },
    get a() {
      return a!;
    },
    get b() {
      return b!;
    },
  };
}

/**
 * Records unhandled promise rejections for the whole file and fails each test that caused
 * one. Call once at the top of a describe block.
 */
export function watchUnhandledRejections(): void {
  const seen: unknown[] = [];
  const listener = (reason: unknown) => seen.push(reason);
  beforeAll(() => process.on('unhandledRejection', listener));
  afterAll(() => process.off('unhandledRejection', listener));
  afterEach(async () => {
    await sleep(20); // let a late rejection surface in the test that caused it
    const found = seen.splice(0);
    expect(found).toEqual([]);
  });
}

/** Measures how long after `from` (ms timestamp) `signal` aborted; resolves -1 if never within `timeout`. */
export function abortTime(signal: AbortSignal, from: number): () => number {
  let at = signal.aborted ? Date.now() : -1;
  signal.addEventListener('abort', () => (at = Date.now()), { once: true });
  return () => (at < 0 ? -1 : at - from);
}

/** Settles `promise` into a value or the error it rejected with (for "no hang" checks). */
export const settled = (promise: Promise<unknown>): Promise<unknown> =>
  promise.catch((error: unknown) => error);

/**
 * A loopback TCP proxy in front of Redis on `target`. `cut()` resets every connection and
 * refuses new ones until `restore()`; `stall()` stops moving bytes on open connections (a
 * network that drops packets without resetting), `unstall()` moves them again; `dropReplies()`
 * forwards requests but loses Redis' answers until the next `cut()`.
 */
export async function tcpProxy(target: number) {
  const port = await freePort();
  const pairs = new Set<{ client: Socket; upstream: Socket }>();
  let refusing = false;
  let stalled = false;
  let dropping = false;
  const server: Server = createServer((client) => {
    if (refusing) {
      client.destroy();
      return;
    }
    const upstream = new Socket();
    const pair = { client, upstream };
    pairs.add(pair);
    upstream.connect(target, '127.0.0.1');
    for (const socket of [client, upstream]) {
      socket.on('error', () => undefined);
      socket.on('close', () => {
        pairs.delete(pair);
        client.destroy();
        upstream.destroy();
      });
    }
    if (stalled) {
      client.pause();
      upstream.pause();
    }
    client.on('data', (data: Buffer) => upstream.write(data));
    upstream.on('data', (data: Buffer) => {
      if (!dropping) client.write(data);
    });
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  const each = (fn: (socket: Socket) => void) => {
    for (const { client, upstream } of pairs) {
      fn(client);
      fn(upstream);
    }
  };
  return {
    port,
    /** Open connections through the proxy. */
    get connections() {
      return pairs.size;
    },
    cut() {
      refusing = true;
      dropping = false;
      each((socket) => socket.destroy());
    },
    restore() {
      refusing = false;
    },
    stall() {
      stalled = true;
      each((socket) => socket.pause());
    },
    unstall() {
      stalled = false;
      each((socket) => socket.resume());
    },
    dropReplies() {
      dropping = true;
    },
    close: () =>
      new Promise<void>((resolve) => {
        refusing = true;
        each((socket) => socket.destroy());
        server.close(() => resolve());
      }),
  };
}
