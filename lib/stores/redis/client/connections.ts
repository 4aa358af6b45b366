import { resolvesWithin } from '../../../time/time-limit';
import { ConnectionState, isRefusal, rootCause } from '../connection-state';
import type { RedisClient, RedisConnection, SubscriberConnection } from './redis-client';

/** How long a closing connection waits for Redis to answer QUIT before it is dropped, ms. */
const QUIT_TIMEOUT = 100;

/** The two connections a Redis store uses, and how to open and close the ones it owns. */
export interface RedisConnections {
  /** Scripts and commands. */
  readonly client: RedisClient;
  /** Pub/sub only; always resubscribes after a reconnect, whatever the user's options say. */
  readonly subscriber: SubscriberConnection;
  /** Whether `client` can take a request now, and its requests in flight. */
  readonly commands: ConnectionState;
  /** Where the connections go, for messages: `host:port`, the Sentinel group or the Cluster. */
  readonly address: string;
  /**
   * Both connections are Cluster clients, and the subscriber can follow sharded channels
   * through a failover (ioredis and node-redis: 6 and later; 5 does not resubscribe them).
   */
  readonly canShard: boolean;
  /** The client library and its major version (messages name it). */
  readonly library: ClientLibrary;
  /**
   * Connects (the connections are created lazily, so a failed bootstrap leaves no socket) and
   * answers once both are ready; rejects with the cause at once when the address refuses (see
   * isRefusal), else after `timeout` ms.
   */
  connect(timeout: number): Promise<void>;
  /**
   * Closes the connections opened here (QUIT, or a disconnect when Redis does not answer it
   * within QUIT_TIMEOUT ms); a client passed in by the user stays open.
   */
  close(): Promise<void>;
}

/** A client library and its major version, e.g. ioredis 6. */
export interface ClientLibrary {
  readonly name: string;
  readonly major: number;
}

/** What an adapter gives to make a store's RedisConnections (see connectionsOf). */
export interface ConnectionsParts {
  readonly client: RedisClient;
  readonly subscriber: SubscriberConnection;
  /** The connections the store opened (and closes); never a client the user passed in. */
  readonly owned: readonly RedisConnection[];
  readonly address: string;
  readonly canShard: boolean;
  readonly library: ClientLibrary;
}

/** A store's RedisConnections on the connections an adapter made: the part every adapter shares. */
export function connectionsOf(parts: ConnectionsParts): RedisConnections {
  const { client, subscriber, owned } = parts;
  return {
    client,
    subscriber,
    commands: new ConnectionState(client, parts.address),
    canShard: parts.canShard,
    library: parts.library,
    address: parts.address,
    async connect(timeout) {
      await Promise.all([client, subscriber].map((connection) => ready(connection, timeout)));
    },
    async close() {
      await Promise.all(owned.map(closeConnection));
    },
  };
}

/**
 * Resolves once `connection` is ready (connecting it if it waits for a first command); rejects
 * with a refusal (see isRefusal) at once, with any other cause after `timeout` ms.
 */
export function ready(connection: RedisConnection, timeout: number): Promise<void> {
  if (connection.status === 'ready') return Promise.resolve();
  return new Promise<void>((resolve, reject) => {
    let lastError: Error | undefined;
    const onError = (error: Error) => {
      lastError = rootCause(error);
      if (isRefusal(error)) done(lastError);
    };
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

async function closeConnection(connection: RedisConnection): Promise<void> {
  if (connection.status === 'end') return;
  if (connection.status !== 'ready' || !(await resolvesWithin(connection.quit(), QUIT_TIMEOUT))) {
    connection.disconnect();
  }
}
