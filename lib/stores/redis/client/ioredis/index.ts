/**
 * The ioredis adapter's front door: the client port on ioredis. The only files of lib/ that
 * import ioredis are this directory's; the rest of the library names ioredis' types (in the
 * module's options) through the re-export below.
 */
export type { Cluster, ClusterNode, ClusterOptions, Redis, RedisOptions } from 'ioredis';
export { ioredisClient, IoredisCluster, IoredisServer, IoredisSubscriber } from './ioredis-client';
export {
  canShardWith,
  openConnections,
  reconnectDelay,
  type ClusterConfig,
  type ConnectionSource,
} from './ioredis-connections';
export { IOREDIS_MAJOR, IOREDIS_VERSION } from './ioredis-version';
export { CALLS_PER_WRITE, missingInternals, UNBATCHED_WARNING } from './write-batching';
