/**
 * Shared tools of the fault-injection suites: fast-reconnecting LockService instances on a
 * controllable server, a log capture, an unhandled-rejection watch, and (re-exported from
 * tcp-proxy.ts) a loopback TCP proxy whose connections can be cut or stalled.
 */
import type { INestApplication, LoggerService } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { randomUUID } from 'node:crypto';
import type { Redis, RedisOptions } from 'ioredis';
import {
  LockService,
  RedisLockModule,
  type LockHandle,
  type LockLostError,
  type RedisLockModuleOptions,
} from '../../lib';
import type { TestRedis } from '../support/redis-server';
import { suiteRedis, type SuiteRedis } from '../support/suite-redis';
import { tcpProxy, type TcpProxy } from './tcp-proxy';
import { sleep } from '../../tools/time';

/** The watchdog lease of the fault suites, ms: short so that faults outlast it quickly. */
export const LEASE = 600;
/** The watchdog renews every third of the lease. */
export const RENEW_PERIOD = Math.floor(LEASE / 3);
/** Loss must be reported within one lease of the fault (plus one renewal period and slack). */
export const LOSS_BOUND = LEASE + RENEW_PERIOD + 250;

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

/** What faultRedis() starts. */
export interface FaultRedis extends SuiteRedis {
  /** lockNode(redis, options), closed after the suite before the server stops. */
  node(...args: Parameters<typeof lockNode>): Promise<LockNode>;
}

/**
 * Jest hooks for a fault suite: watchUnhandledRejections() and its own controllable redis-server
 * with a raw client (suiteRedis({ control: true })), stopped after the lock nodes it started.
 */
export function faultRedis(): FaultRedis {
  watchUnhandledRejections();
  const server = suiteRedis({ control: true });
  return {
    get redis() {
      return server.redis;
    },
    get raw() {
      return server.raw;
    },
    closing: server.closing,
    node: async (...args) => server.closing(await lockNode(...args)),
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
 * Jest hooks for a fault suite: faultRedis(), and two lock nodes `a` and `b` on it under one key
 * prefix, all stopped after the suite. `made` gets them once started (assign the suite's
 * variables there); or read the returned fields inside hooks and tests.
 */
export function twoLockNodes(
  options: Parameters<typeof lockNode>[1] = {},
  made?: (nodes: TwoLockNodes) => void,
): TwoLockNodes {
  const server = faultRedis();
  let a: LockNode | undefined;
  let b: LockNode | undefined;
  beforeAll(async () => {
    const { redis, raw } = server;
    a = await server.node(fastRedis(redis.port), options);
    b = await server.node(fastRedis(redis.port), { ...options, keyPrefix: a.prefix });
    made?.({ redis, raw, a, b });
  });
  return {
    get redis() {
      return server.redis;
    },
    get raw() {
      return server.raw;
    },
    get a() {
      return a!;
    },
    get b() {
      return b!;
    },
  };
}

/** What proxiedRedis() starts. */
export interface ProxiedRedis extends FaultRedis {
  readonly proxy: TcpProxy;
  /** A lock node on the server itself, not through the proxy. */
  readonly direct: LockNode;
}

/**
 * Jest hooks for a suite of faults between client and server: faultRedis(), a TCP proxy in front
 * of it (moving bytes again and accepting connections after each test) and a lock node `direct`
 * on the server itself (lockNode with `options`), all stopped after the suite. `made` gets them
 * (awaited: it may start more lock nodes with node()).
 */
export function proxiedRedis(
  options: Parameters<typeof lockNode>[1],
  made: (suite: ProxiedRedis) => unknown,
): void {
  const server = faultRedis();
  let proxy: TcpProxy | undefined;
  beforeAll(async () => {
    const { redis, raw } = server;
    proxy = server.closing(await tcpProxy(redis.port));
    const direct = await server.node(fastRedis(redis.port), options);
    await made({ redis, raw, closing: server.closing, node: server.node, proxy, direct });
  });
  afterEach(() => {
    proxy?.unstall();
    proxy?.restore();
  });
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

/**
 * Waits one renewal period into `held`'s hold, starts `fault`, and returns how long after the
 * fault the holder's signal aborted: -1 if not within LOSS_BOUND (which it waits).
 */
export async function lossAfter(held: LockHandle, fault: () => void): Promise<number> {
  await sleep(RENEW_PERIOD + 20);
  fault();
  const lostAfter = abortTime(held.signal, Date.now());
  await sleep(LOSS_BOUND);
  return lostAfter();
}

/** Settles `promise` into a value or the error it rejected with (for "no hang" checks). */
export const settled = (promise: Promise<unknown>): Promise<unknown> =>
  promise.catch((error: unknown) => error);

export { tcpProxy, type TcpProxy };
