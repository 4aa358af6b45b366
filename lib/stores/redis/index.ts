/** The Redis store's front door: what opening a store on Redis needs. */
export { IOREDIS_MAJOR, openConnections, type ClusterConfig } from './redis-connections';
export { RedisStore } from './redis-store';
