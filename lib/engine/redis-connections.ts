import { Redis, type RedisOptions } from 'ioredis';
import { resolvesWithin } from './time-limit';

/** How long a closing connection waits for Redis to answer QUIT before it is dropped, ms. */
const QUIT_TIMEOUT = 100;

/** The two connections a lock engine uses, and how to close the ones it owns. */
export interface RedisConnections {
  /** Scripts and commands. */
  client: Redis;
  /** Pub/sub only. */
  subscriber: Redis;
  /**
   * Closes the connections opened here (QUIT, or a disconnect when Redis does not answer it
   * within QUIT_TIMEOUT ms); a client passed in by the user stays open.
   */
  close(): Promise<void>;
}

/**
 * Opens the engine's connections: two from `redis` (options or URL), or, given a user-owned
 * `client`, a duplicate of it for pub/sub.
 */
export function openConnections(source: {
  redis?: RedisOptions | string;
  client?: Redis;
}): RedisConnections {
  const owned: Redis[] = [];
  let client: Redis;
  if (source.client) {
    client = source.client;
  } else {
    // Lazy: nothing connects until the first lock call, so a failed bootstrap leaves no socket.
    client =
      typeof source.redis === 'string'
        ? new Redis(source.redis, { lazyConnect: true })
        : new Redis({ ...source.redis, lazyConnect: true });
    owned.push(client);
  }
  const subscriber = client.duplicate({ lazyConnect: true });
  owned.push(subscriber);
  return {
    client,
    subscriber,
    async close() {
      await Promise.all(owned.map(closeConnection));
    },
  };
}

async function closeConnection(connection: Redis): Promise<void> {
  if (connection.status === 'end') return;
  if (connection.status !== 'ready' || !(await resolvesWithin(connection.quit(), QUIT_TIMEOUT))) {
    connection.disconnect();
  }
}
