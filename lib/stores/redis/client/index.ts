/**
 * The client port's front door: what the Redis store needs of a client (adapters: ioredis/,
 * node-redis/).
 */
export type * from './redis-client';
export {
  connectionsOf,
  ready,
  type ClientLibrary,
  type ConnectionsParts,
  type RedisConnections,
} from './connections';
export { isReplyError, recogniseReplyErrors } from './reply-errors';
export {
  isWrappedClient,
  openWrapped,
  wrapClient,
  type WrappedRedisClient,
} from './wrapped-client';
