import type { Cluster, Redis, RedisOptions, WrappedRedisClient } from '../../stores/redis';
import { isWrappedClient } from '../../stores/redis';
import { describe, type OptionTableOf } from '../../core';
import type { ClusterConfig } from '../../stores/redis';
import { MemoryLockStore } from '../../stores/memory';
import type { LockStore } from '../../store';
import { LockOptionsError } from '../../errors';
import type { RedisLockModuleOptions } from './redis-lock-options.interface';

/** The module options that say where locks live: exactly one of them is given. */
type SourceOptions = Pick<RedisLockModuleOptions, 'redis' | 'cluster' | 'client' | 'store'>;

/** Each source option, with a one-line description for error messages. */
const SOURCES: Readonly<Record<keyof SourceOptions, string>> = {
  redis: 'ioredis options or a redis:// URL, Sentinel included; the module owns the connections',
  cluster: '{ nodes, options? } of a Redis Cluster; the module owns the connections',
  client:
    'an ioredis Redis or Cluster instance you own, or a node-redis client wrapped with nodeRedisClient (nestjs-redis-lock/node-redis)',
  store: "'memory', a MemoryLockStore or a LockStore of your own",
};

/** The option table of the source options: the shape of each (exactly one: assertOneSource). */
export const SOURCE_OPTIONS = {
  redis: { check: redisCheck },
  cluster: { check: clusterCheck },
  client: { check: clientCheck },
  store: { check: storeCheck },
} as const satisfies OptionTableOf<SourceOptions>;

/** Checks that exactly one source option is given (before each one's shape). */
export function assertOneSource(options: Record<string, unknown>): void {
  const names = Object.keys(SOURCES) as (keyof SourceOptions)[];
  const given = names.filter((name) => options[name] !== undefined);
  if (given.length !== 1) {
    const list = names.map((name) => `\`${name}\` (${SOURCES[name]})`);
    throw new LockOptionsError(
      given[1] ?? names[0],
      `give exactly one of ${list.join(', or ')}; got ${given.length === 0 ? 'none' : given.map((name) => `\`${name}\``).join(' and ')}.`,
    );
  }
}

/** The methods every LockStore has (the store seam's required operations). */
const LOCK_STORE_METHODS = [
  'acquire',
  'release',
  'renew',
  'forceUnlock',
  'remainingTtl',
  'channel',
  'subscribe',
  'unsubscribe',
  'listen',
] as const;

/** Whether `store` is a LockStore of the user's own (not the memory store or its name). */
export function isUserStore(store: unknown): store is LockStore {
  return (
    typeof store === 'object' &&
    store !== null &&
    !(store instanceof MemoryLockStore) &&
    LOCK_STORE_METHODS.every(
      (method) => typeof (store as Record<string, unknown>)[method] === 'function',
    )
  );
}

function storeCheck(store: unknown): 'memory' | MemoryLockStore | LockStore {
  if (store === 'memory' || store instanceof MemoryLockStore || isUserStore(store)) return store;
  throw new LockOptionsError(
    'store',
    `expected 'memory' or a MemoryLockStore (locks in this process's memory), or a LockStore of your own (${LOCK_STORE_METHODS.join(', ')}), got ${describe(store)}.`,
  );
}

function redisCheck(redis: unknown): RedisOptions | string {
  assertRedis(redis);
  return redis as RedisOptions | string;
}

function clusterCheck(cluster: unknown): ClusterConfig {
  assertCluster(cluster);
  return cluster as ClusterConfig;
}

function clientCheck(client: unknown): Redis | Cluster | WrappedRedisClient {
  if (isWrappedClient(client)) return client;
  assertClient(client);
  return client as Redis | Cluster;
}

function assertRedis(redis: unknown): void {
  if (typeof redis === 'string') {
    let protocol: string | undefined;
    try {
      protocol = new URL(redis).protocol;
    } catch {
      protocol = undefined;
    }
    if (protocol !== 'redis:' && protocol !== 'rediss:') {
      throw new LockOptionsError(
        'redis',
        `expected a redis:// or rediss:// URL such as redis://127.0.0.1:6379, got ${describe(redis)}.`,
      );
    }
    return;
  }
  if (typeof redis !== 'object' || redis === null || Array.isArray(redis)) {
    throw new LockOptionsError(
      'redis',
      `expected ioredis options ({ host, port, … }) or a redis:// URL, got ${describe(redis)}.`,
    );
  }
  assertNoIoredisPrefix((redis as RedisOptions).keyPrefix, 'redis.keyPrefix');
}

function assertCluster(cluster: unknown): void {
  if (typeof cluster !== 'object' || cluster === null || Array.isArray(cluster)) {
    throw new LockOptionsError(
      'cluster',
      `expected { nodes: [{ host, port }, …], options? }, got ${describe(cluster)}.`,
    );
  }
  const { nodes, options } = cluster as Partial<ClusterConfig>;
  if (!Array.isArray(nodes) || nodes.length === 0) {
    throw new LockOptionsError(
      'cluster.nodes',
      `expected a non-empty array of startup nodes ({ host, port }, 'host:port' or redis:// URLs), got ${Array.isArray(nodes) ? 'an empty array' : describe(nodes)}.`,
    );
  }
  nodes.forEach((node, i) => assertNode(node, `cluster.nodes[${i}]`));
  if (options !== undefined && (typeof options !== 'object' || options === null)) {
    throw new LockOptionsError(
      'cluster.options',
      `expected ioredis ClusterOptions, got ${describe(options)}.`,
    );
  }
  assertNoIoredisPrefix(options?.keyPrefix, 'cluster.options.keyPrefix');
  assertNoIoredisPrefix(options?.redisOptions?.keyPrefix, 'cluster.options.redisOptions.keyPrefix');
}

/** A startup node: `{ host?, port }` with a port from 1 to 65535, `host:port`, or a redis:// URL. */
function assertNode(node: unknown, option: string): void {
  if (typeof node === 'string') {
    const url = /^rediss?:\/\//.test(node) ? safeUrl(node) : safeUrl(`redis://${node}`);
    if (
      url &&
      url.hostname !== '' &&
      isPort(Number(url.port)) &&
      (url.pathname === '' || url.pathname === '/')
    )
      return;
  } else if (typeof node === 'object' && node !== null && !Array.isArray(node)) {
    const { host, port } = node as { host?: unknown; port?: unknown };
    if ((host === undefined || (typeof host === 'string' && host !== '')) && isPort(port)) return;
  } else if (isPort(node)) {
    return;
  }
  throw new LockOptionsError(
    option,
    `expected a host:port node such as { host: '127.0.0.1', port: 7000 } or '127.0.0.1:7000', got ${describe(node)}.`,
  );
}

function isPort(port: unknown): boolean {
  return typeof port === 'number' && Number.isInteger(port) && port >= 1 && port <= 65_535;
}

function safeUrl(text: string): URL | undefined {
  try {
    return new URL(text);
  } catch {
    return undefined;
  }
}

function assertClient(client: unknown): void {
  if (isNodeRedis(client)) {
    throw new LockOptionsError(
      'client',
      'got a node-redis client: wrap it with nodeRedisClient from nestjs-redis-lock/node-redis (client: nodeRedisClient(createClient(...))).',
    );
  }
  const candidate = client as Partial<Redis> | null;
  if (
    typeof candidate !== 'object' ||
    candidate === null ||
    typeof candidate.evalsha !== 'function' ||
    typeof candidate.duplicate !== 'function'
  ) {
    throw new LockOptionsError(
      'client',
      `expected an ioredis Redis instance (new Redis(...)) or Cluster instance (new Cluster(...)), or a node-redis client wrapped with nodeRedisClient (nestjs-redis-lock/node-redis), got ${describe(client)}.`,
    );
  }
  if ((client as { isCluster?: boolean }).isCluster === true) {
    const options = (client as Cluster).options;
    assertNoIoredisPrefix(options?.keyPrefix, 'client.options.keyPrefix');
    assertNoIoredisPrefix(
      options?.redisOptions?.keyPrefix,
      'client.options.redisOptions.keyPrefix',
    );
    return;
  }
  assertNoIoredisPrefix((client as Redis).options?.keyPrefix, 'client.options.keyPrefix');
}

/** Whether `client` looks like a node-redis client, Cluster or Sentinel client (not wrapped). */
function isNodeRedis(client: unknown): boolean {
  const candidate = client as Record<string, unknown> | null;
  return (
    typeof candidate === 'object' &&
    candidate !== null &&
    typeof candidate.sendCommand === 'function' &&
    typeof candidate.isReady === 'boolean'
  );
}

/** ioredis' own keyPrefix would prefix the lock hash but not its channel: names stop matching Redisson's. */
function assertNoIoredisPrefix(prefix: unknown, option: string): void {
  if (prefix === undefined || prefix === '') return;
  throw new LockOptionsError(
    option,
    `ioredis' keyPrefix is not supported: it would prefix the lock's keys but not its pub/sub channel, so names stop matching Redisson's. Use the module's own keyPrefix option instead (e.g. keyPrefix: ${describe(prefix)}).`,
  );
}
