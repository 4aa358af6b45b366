import type { RedisConnections } from './connections';

/**
 * A Redis client of another library than ioredis, wrapped for the module's `client` option by
 * that library's adapter (`nodeRedisClient` of `nestjs-redis-lock/node-redis`). Opaque: only
 * the adapter's function makes one.
 */
export interface WrappedRedisClient {
  /** The client library and its major version, e.g. `node-redis 6`. */
  readonly library: string;
}

/** How each wrapped client opens a store's connections (see wrapClient). */
const openers = new WeakMap<WrappedRedisClient, () => RedisConnections>();

/** The value an adapter gives for a client of `library`, opening connections with `open`. */
export function wrapClient(library: string, open: () => RedisConnections): WrappedRedisClient {
  const wrapped: WrappedRedisClient = Object.freeze({ library });
  openers.set(wrapped, open);
  return wrapped;
}

/** Whether `value` is a client an adapter wrapped (see wrapClient). */
export function isWrappedClient(value: unknown): value is WrappedRedisClient {
  return typeof value === 'object' && value !== null && openers.has(value as WrappedRedisClient);
}

/**
 * A store's connections on a wrapped client: the user's client for commands (never closed by
 * the store), and a duplicate of it for pub/sub that the store owns.
 */
export function openWrapped(client: WrappedRedisClient): RedisConnections {
  return openers.get(client)!();
}
