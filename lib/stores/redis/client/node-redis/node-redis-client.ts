import { LockOptionsError } from '../../../../errors';
import { wrapClient, type WrappedRedisClient } from '../wrapped-client';
import { nodeRedisConnections } from './node-redis-connections';
import type { NodeRedisClient, NodeRedisCluster } from './node-redis-types';
import { nodeRedisMajor } from './node-redis-version';

/**
 * Wraps a node-redis client (the `redis` package, 5 or 6) for RedisLockModule's `client` option:
 * `client: nodeRedisClient(createClient({ url }))`, or a Cluster client (`createCluster`). The
 * client stays yours: the module sends its commands on it, connects it at startup if it is not
 * yet, and never closes it; it opens (and closes) a duplicate of it for pub/sub. A Sentinel
 * client (`createSentinel`) is not supported: give ioredis' Sentinel settings to `redis`.
 */
export function nodeRedisClient(client: NodeRedisClient | NodeRedisCluster): WrappedRedisClient {
  const candidate = client as unknown as Partial<Record<string, unknown>> | null;
  if (typeof candidate?.getMasterNode === 'function') {
    throw new LockOptionsError(
      'client',
      "a node-redis Sentinel client (createSentinel) is not supported: give the Sentinel settings to the `redis` option (ioredis' `sentinels` and `name`) instead.",
    );
  }
  if (
    typeof candidate?.sendCommand !== 'function' ||
    typeof candidate.duplicate !== 'function' ||
    typeof candidate.isOpen !== 'boolean'
  ) {
    throw new LockOptionsError(
      'client',
      'nodeRedisClient() expects a node-redis client (createClient(...)) or Cluster client (createCluster(...)).',
    );
  }
  const major = nodeRedisMajor();
  return wrapClient(`node-redis ${major}`, () => nodeRedisConnections(client, major));
}
