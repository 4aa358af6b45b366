/** The client port's front door: what the Redis store needs of a client (adapters: ioredis/). */
export type * from './redis-client';
export { connectionsOf, ready, type ConnectionsParts, type RedisConnections } from './connections';
export { isReplyError, recogniseReplyErrors } from './reply-errors';
