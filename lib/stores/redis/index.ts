/** The Redis store's front door: what opening a store on Redis needs. */
export {
  IOREDIS_MAJOR,
  openConnections,
  type Cluster,
  type ClusterConfig,
  type ClusterNode,
  type ClusterOptions,
  type Redis,
  type RedisOptions,
} from './client/ioredis';
export { RedisStore } from './redis-store';
