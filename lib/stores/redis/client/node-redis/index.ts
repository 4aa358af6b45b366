/**
 * The node-redis adapter's front door: the client port on node-redis (the `redis` package, 5 and
 * 6). Nothing here loads node-redis: the user's client is passed in (see nodeRedisClient), and
 * node-redis is described by the shapes the adapter uses (node-redis-types.ts).
 */
export { nodeRedisClient } from './node-redis-client';
export { isNodeRedisCluster, nodeRedisConnections } from './node-redis-connections';
export { NodeRedisClusterClient } from './node-redis-cluster';
export { nodeRedisServer, NodeRedisServer } from './node-redis-server';
export { NodeRedisSubscriber } from './node-redis-subscriber';
export type { NodeRedisClient, NodeRedisCluster, NodeRedisClusterNode } from './node-redis-types';
export { nodeRedisMajor } from './node-redis-version';
export { isNodeRedisReplyError, RESP2_REPLIES, resp2Reply } from './replies';
