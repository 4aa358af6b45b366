import { createRequire } from 'node:module';
import { Cluster, Redis, type ClusterNode, type ClusterOptions, type RedisOptions } from 'ioredis';
import { resolvesWithin } from '../../time/time-limit';
import { ConnectionState, isRefusal, rootCause } from './connection-state';
import type { ScriptClient } from './lua-script';

/** How long a closing connection waits for Redis to answer QUIT before it is dropped, ms. */
const QUIT_TIMEOUT = 100;

/** A Redis Cluster to connect to: ioredis' `Cluster` arguments. */
export interface ClusterConfig {
  /** Startup nodes: `{ host, port }` objects, `host:port` strings or `redis://` URLs. */
  nodes: ClusterNode[];
  /** ioredis' ClusterOptions. */
  options?: ClusterOptions;
}

/** Where a store's connections come from: exactly one of the three. */
export interface ConnectionSource {
  redis?: RedisOptions | string;
  cluster?: ClusterConfig;
  client?: Redis | Cluster;
}

/** The two connections a Redis store uses, and how to open and close the ones it owns. */
export interface RedisConnections {
  /** Scripts and commands. */
  readonly client: ScriptClient;
  /** Pub/sub only; always resubscribes after a reconnect, whatever the user's options say. */
  readonly subscriber: ScriptClient;
  /** Whether `client` can take a request now, and its requests in flight. */
  readonly commands: ConnectionState;
  /** Where the connections go, for messages: `host:port`, the Sentinel group or the Cluster. */
  readonly address: string;
  /**
   * Both connections are Cluster clients, and the subscriber can follow sharded channels
   * through a failover (ioredis 6 and later; ioredis 5 does not resubscribe them).
   */
  readonly canShard: boolean;
  /**
   * Connects (the connections are created lazily, so a failed bootstrap leaves no socket) and
   * answers once both are ready; rejects with the cause at once when the address refuses (see
   * isRefusal), else after `timeout` ms.
   */
  connect(timeout: number): Promise<void>;
  /**
   * Closes the connections opened here (QUIT, or a disconnect when Redis does not answer it
   * within QUIT_TIMEOUT ms); a client passed in by the user stays open.
   */
  close(): Promise<void>;
}

/**
 * How long the connections the module opens wait before their `times`-th reconnect, ms, unless
 * the user's options give a `retryStrategy`: ioredis' backoff, capped at 200 ms instead of 2 s,
 * so that lock calls work again within a fraction of a second of Redis being back (a refused
 * reconnect costs next to nothing).
 */
export function reconnectDelay(times: number): number {
  return Math.min(times * 50, 200);
}

/** The major version of the ioredis the library runs with. */
export const IOREDIS_MAJOR = Number(
  (createRequire(__filename)('ioredis/package.json') as { version: string }).version.split('.')[0],
);

/**
 * Whether a subscriber can follow sharded channels: a Cluster one, on an ioredis whose major
 * is `ioredisMajor` (6 and later resubscribe them after a failover; 5 does not).
 */
export function canShardWith(cluster: boolean, ioredisMajor: number): boolean {
  return cluster && ioredisMajor >= 6;
}

/**
 * Opens the store's connections: from `redis` (options or URL) or `cluster` (nodes and
 * options) two owned ones; given a user-owned `client` (Redis or Cluster), a duplicate of it
 * for pub/sub. A Cluster subscriber is made for sharded pub/sub when ioredis can resubscribe it
 * (`ioredisMajor`: the ioredis loaded, or another major's behaviour, for tests).
 */
export function openConnections(
  source: ConnectionSource,
  ioredisMajor = IOREDIS_MAJOR,
): RedisConnections {
  const owned: ScriptClient[] = [];
  let client: ScriptClient;
  if (source.client) {
    client = source.client;
  } else if (source.cluster) {
    client = new Cluster(source.cluster.nodes, { ...source.cluster.options, lazyConnect: true });
    owned.push(client);
  } else {
    client =
      typeof source.redis === 'string'
        ? new Redis(source.redis, { retryStrategy: reconnectDelay, lazyConnect: true })
        : new Redis({ retryStrategy: reconnectDelay, ...source.redis, lazyConnect: true });
    owned.push(client);
  }
  const cluster = client.isCluster;
  const canShard = canShardWith(cluster, ioredisMajor);
  const subscriber = cluster
    ? (client as Cluster).duplicate(undefined, {
        lazyConnect: true,
        autoResubscribe: true,
        shardedSubscribers: canShard,
      })
    : (client as Redis).duplicate({ lazyConnect: true, autoResubscribe: true });
  owned.push(subscriber);
  const address = cluster
    ? clusterAddress(client as Cluster)
    : addressOf((client as Redis).options);
  return {
    client,
    subscriber,
    commands: new ConnectionState(client, address),
    canShard,
    address,
    async connect(timeout) {
      await Promise.all([client, subscriber].map((connection) => ready(connection, timeout)));
    },
    async close() {
      await Promise.all(owned.map(closeConnection));
    },
  };
}

/**
 * Resolves once `connection` is ready (connecting it if it waits for a first command); rejects
 * with a refusal (see isRefusal) at once, with any other cause after `timeout` ms.
 */
export function ready(connection: ScriptClient, timeout: number): Promise<void> {
  if (connection.status === 'ready') return Promise.resolve();
  return new Promise<void>((resolve, reject) => {
    let lastError: Error | undefined;
    const onError = (error: Error) => {
      lastError = rootCause(error);
      if (isRefusal(error)) done(lastError);
    };
    const done = (error?: Error) => {
      clearTimeout(timer);
      connection.off('ready', onReady);
      connection.off('error', onError);
      if (error) reject(error);
      else resolve();
    };
    const onReady = () => done();
    const timer = setTimeout(
      () =>
        done(
          new Error(
            `no connection within ${timeout} ms${lastError ? `: ${lastError.message}` : ''}`,
            { cause: lastError },
          ),
        ),
      timeout,
    );
    timer.unref();
    connection.on('ready', onReady);
    connection.on('error', onError);
    if (connection.status === 'wait') connection.connect().catch(onError);
  });
}

function addressOf(options: RedisOptions): string {
  if (options.sentinels?.length) {
    const sentinels = options.sentinels.map((s) => `${s.host ?? 'localhost'}:${s.port ?? 26379}`);
    return `Sentinel group "${options.name ?? ''}" via ${sentinels.join(', ')}`;
  }
  if (options.path) return options.path;
  return `${options.host ?? 'localhost'}:${options.port ?? 6379}`;
}

function clusterAddress(cluster: Cluster): string {
  const nodes = (cluster as unknown as { startupNodes?: unknown[] }).startupNodes ?? [];
  const named = nodes.map((node) =>
    typeof node === 'object' && node !== null
      ? `${(node as { host?: string }).host ?? 'localhost'}:${(node as { port?: number }).port ?? 6379}`
      : String(node),
  );
  return `Redis Cluster via ${named.join(', ') || 'its startup nodes'}`;
}

async function closeConnection(connection: ScriptClient): Promise<void> {
  if (connection.status === 'end') return;
  if (connection.status !== 'ready' || !(await resolvesWithin(connection.quit(), QUIT_TIMEOUT))) {
    connection.disconnect();
  }
}
