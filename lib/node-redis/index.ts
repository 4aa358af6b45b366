/**
 * `nestjs-redis-lock/node-redis`: node-redis (the `redis` package, 5 or 6) as the lock store's
 * client. `RedisLockModule.forRoot({ client: nodeRedisClient(createClient({ url })) })`.
 */
export { nodeRedisClient } from '../stores/redis/client/node-redis';
export type {
  NodeRedisClient,
  NodeRedisCluster,
  NodeRedisClusterNode,
} from '../stores/redis/client/node-redis';
export type { WrappedRedisClient } from '../stores/redis/client/wrapped-client';
