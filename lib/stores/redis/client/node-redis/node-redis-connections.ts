import { connectionsOf, type RedisConnections } from '../connections';
import { NodeRedisClusterClient } from './node-redis-cluster';
import { nodeRedisServer } from './node-redis-server';
import { NodeRedisSubscriber } from './node-redis-subscriber';
import type { NodeRedisClient, NodeRedisCluster, NodeRedisOptions } from './node-redis-types';

/** The first node-redis major whose Cluster client follows sharded channels through a failover. */
const SHARDS_THROUGH_FAILOVER = 6;

/** Whether `client` is a node-redis Cluster client (createCluster) rather than a client. */
export function isNodeRedisCluster(
  client: NodeRedisClient | NodeRedisCluster,
): client is NodeRedisCluster {
  return 'masters' in client && 'slots' in client;
}

/**
 * A store's connections on the user's node-redis client or Cluster client (`major`: its
 * node-redis major): that client for commands (the store never closes it), and a duplicate for
 * pub/sub, which the store opens and closes. A Cluster's duplicate connects only its pub/sub
 * connections (`minimizeConnections`), and takes sharded channels when node-redis follows them
 * through a failover: node-redis 6, which refreshes its slot map when a master stops answering
 * and moves that master's subscriptions to its successor (node-redis 5 refreshes it only on a
 * MOVED reply, which a subscriber never gets: its channels on a lost master would stay silent).
 */
export function nodeRedisConnections(
  client: NodeRedisClient | NodeRedisCluster,
  major: number,
): RedisConnections {
  const cluster = isNodeRedisCluster(client);
  const canShard = cluster && major >= SHARDS_THROUGH_FAILOVER;
  const subscriber = cluster
    ? new NodeRedisSubscriber(client.duplicate({ minimizeConnections: true }), true)
    : new NodeRedisSubscriber(client.duplicate(), false);
  return connectionsOf({
    client: cluster ? new NodeRedisClusterClient(client) : nodeRedisServer(client),
    subscriber,
    owned: [subscriber],
    canShard,
    library: { name: 'node-redis', major },
    address: cluster
      ? `Redis Cluster via ${client._options?.rootNodes?.map(addressOf).join(', ') || 'its startup nodes'}`
      : addressOf(client.options ?? {}),
  });
}

/** Where a node-redis client connects, for messages: `host:port`, its socket path or its URL's host. */
function addressOf({ url, socket }: NodeRedisOptions): string {
  if (socket?.path) return socket.path;
  if (socket?.host !== undefined || socket?.port !== undefined || url === undefined) {
    return `${socket?.host ?? 'localhost'}:${socket?.port ?? 6379}`;
  }
  try {
    return new URL(url).host;
  } catch {
    return 'its URL';
  }
}
