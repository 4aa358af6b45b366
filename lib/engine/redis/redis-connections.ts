import { Redis, type RedisOptions } from 'ioredis';
import { resolvesWithin } from '../time-limit';

/** How long a closing connection waits for Redis to answer QUIT before it is dropped, ms. */
const QUIT_TIMEOUT = 100;

/** The two connections a Redis store uses, and how to open and close the ones it owns. */
export interface RedisConnections {
  /** Scripts and commands. */
  readonly client: Redis;
  /** Pub/sub only; always resubscribes after a reconnect, whatever the user's options say. */
  readonly subscriber: Redis;
  /** Where the connections go, for messages: `host:port`, or the Sentinel group. */
  readonly address: string;
  /**
   * Connects (the connections are created lazily, so a failed bootstrap leaves no socket) and
   * answers once both are ready; rejects with the cause after `timeout` ms.
   */
  connect(timeout: number): Promise<void>;
  /**
   * Closes the connections opened here (QUIT, or a disconnect when Redis does not answer it
   * within QUIT_TIMEOUT ms); a client passed in by the user stays open.
   */
  close(): Promise<void>;
}

/**
 * Opens the store's connections: two from `redis` (options or URL), or, given a user-owned
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
    client =
      typeof source.redis === 'string'
        ? new Redis(source.redis, { lazyConnect: true })
        : new Redis({ ...source.redis, lazyConnect: true });
    owned.push(client);
  }
  const subscriber = client.duplicate({ lazyConnect: true, autoResubscribe: true });
  owned.push(subscriber);
  return {
    client,
    subscriber,
    address: addressOf(client.options),
    async connect(timeout) {
      await Promise.all([client, subscriber].map((connection) => ready(connection, timeout)));
    },
    async close() {
      await Promise.all(owned.map(closeConnection));
    },
  };
}

/** Resolves once `connection` is ready (connecting it if it waits for a first command). */
export function ready(connection: Redis, timeout: number): Promise<void> {
  if (connection.status === 'ready') return Promise.resolve();
  return new Promise<void>((resolve, reject) => {
    let lastError: Error | undefined;
    const onError = (error: Error) => (lastError = error);
    const done = (error?: Error) => {
      clearTimeout(timer);
      connection.off('ready', onReady);
      connection.off('error', onError);
      if (error) reject(error);
      else resolve();
    };
    const onReady = () => done();
    const timer = setTimeout(
      () =>
        done(
          new Error(
            `no connection within ${timeout} ms${lastError ? `: ${lastError.message}` : ''}`,
            { cause: lastError },
          ),
        ),
      timeout,
    );
    timer.unref();
    connection.on('ready', onReady);
    connection.on('error', onError);
    if (connection.status === 'wait') connection.connect().catch(onError);
  });
}

function addressOf(options: RedisOptions): string {
  if (options.sentinels?.length) {
    const sentinels = options.sentinels.map((s) => `${s.host ?? 'localhost'}:${s.port ?? 26379}`);
    return `Sentinel group "${options.name ?? ''}" via ${sentinels.join(', ')}`;
  }
  if (options.path) return options.path;
  return `${options.host ?? 'localhost'}:${options.port ?? 6379}`;
}

async function closeConnection(connection: Redis): Promise<void> {
  if (connection.status === 'end') return;
  if (connection.status !== 'ready' || !(await resolvesWithin(connection.quit(), QUIT_TIMEOUT))) {
    connection.disconnect();
  }
}
