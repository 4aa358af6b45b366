import { Cluster, Redis, type ClusterNode, type ClusterOptions, type RedisOptions } from 'ioredis';
import { connectionsOf, type RedisConnections } from '../connections';
import { ioredisClient, IoredisSubscriber } from './ioredis-client';
import { IOREDIS_MAJOR } from './ioredis-version';

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

/**
 * How long the connections the module opens wait before their `times`-th reconnect, ms, unless
 * the user's options give a `retryStrategy`: ioredis' backoff, capped at 200 ms instead of 2 s,
 * so that lock calls work again within a fraction of a second of Redis being back (a refused
 * reconnect costs next to nothing).
 */
export function reconnectDelay(times: number): number {
  return Math.min(times * 50, 200);
}

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
  let client: Redis | Cluster;
  if (source.client) {
    client = source.client;
  } else if (source.cluster) {
    client = new Cluster(source.cluster.nodes, { ...source.cluster.options, lazyConnect: true });
  } else {
    client =
      typeof source.redis === 'string'
        ? new Redis(source.redis, { retryStrategy: reconnectDelay, lazyConnect: true })
        : new Redis({ retryStrategy: reconnectDelay, ...source.redis, lazyConnect: true });
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
  const subscriberClient = new IoredisSubscriber(subscriber);
  const commandClient = ioredisClient(client);
  return connectionsOf({
    client: commandClient,
    subscriber: subscriberClient,
    owned: source.client ? [subscriberClient] : [commandClient, subscriberClient],
    canShard,
    library: { name: 'ioredis', major: ioredisMajor },
    address: cluster
      ? clusterAddress(startupNodes(client as Cluster, source.cluster?.nodes))
      : addressOf((client as Redis).options),
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

/**
 * A Cluster client's startup nodes: `given` when the store made it from them, else (a client
 * the user made) as the client keeps them, in a field ioredis does not document (none when it
 * is gone: the address then says "its startup nodes").
 */
function startupNodes(cluster: Cluster, given: readonly ClusterNode[] | undefined): unknown[] {
  return given
    ? [...given]
    : ((cluster as unknown as { startupNodes?: unknown[] }).startupNodes ?? []);
}

function clusterAddress(nodes: readonly unknown[]): string {
  const named = nodes.map((node) =>
    typeof node === 'object' && node !== null
      ? `${(node as { host?: string }).host ?? 'localhost'}:${(node as { port?: number }).port ?? 6379}`
      : String(node),
  );
  return `Redis Cluster via ${named.join(', ') || 'its startup nodes'}`;
}
