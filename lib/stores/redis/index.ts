/** The Redis store's front door: what opening a store on Redis (and inspecting one) needs. */
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
export {
  isReplyError,
  isWrappedClient,
  openWrapped,
  ready,
  type WrappedRedisClient,
  type Outcome,
  type PipelineCommand,
  type RedisClient,
  type RedisConnections,
  type ServerClient,
} from './client';
export {
  CLIENT_KEY_PATTERN,
  clientIdOfKey,
  ownerClientId,
  parseClientInfo,
  readClientInfo,
} from './client-registry';
export { keySlot } from './key-slot';
export {
  channelName,
  fairQueueName,
  fairTimeoutName,
  permitsName,
  rwChannelName,
  semaphoreChannelName,
  tokenKey,
} from './redis-names';
export { RedisStore } from './redis-store';
