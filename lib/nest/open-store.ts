import type { Cluster, Redis, RedisOptions, WrappedRedisClient } from '../stores/redis';
import { MemoryLockStore } from '../stores/memory';
import {
  IOREDIS_MAJOR,
  isWrappedClient,
  openConnections,
  openWrapped,
  type ClusterConfig,
  RedisStore,
} from '../stores/redis';
import type { LockStore } from '../store';

/** Quiet period between two logged connection errors of one connection, ms. */
const CONNECTION_ERROR_LOG_INTERVAL = 5_000;

/** Where the locks live: exactly one of the four (validated by the caller), and settings. */
export interface StoreSource {
  redis?: RedisOptions | string;
  cluster?: ClusterConfig;
  client?: Redis | Cluster | WrappedRedisClient;
  store?: 'memory' | MemoryLockStore;
  /** How long WAIT waits for the replicas a synced acquire asks for, ms. */
  syncTimeout: number;
}

/** A LockStore as a service opens it: connected at startup, closed at shutdown. */
export interface OpenedStore extends LockStore {
  /** Connects; rejects naming the address and the cause after `timeout` ms. */
  connect(timeout: number): Promise<void>;
  /** Round-trip time to the store, ms. */
  ping(): Promise<number>;
  /** Closes what was opened here (connections, subscriptions); the user's own client stays open. */
  close(): Promise<void>;
}

/** The stores openStore opened: the module connects them at startup and closes them. */
const opened = new WeakSet<LockStore>();

/** `store` as openStore opened it (to connect, ping, close), or undefined: a store of the user's. */
export function storeOpenedByModule(store: LockStore): OpenedStore | undefined {
  return opened.has(store) ? (store as OpenedStore) : undefined;
}

/**
 * Opens the store `source` names: a memory store connection, or a RedisStore on new
 * connections (or the user's client: an ioredis one, or another library's as its adapter
 * wrapped it), whose connection errors go to `warn`, rate-limited. On a Cluster with a client
 * library below 6 (ioredis: `ioredisMajor`, the one loaded unless a test says otherwise), warns
 * once that release notices use classic pub/sub.
 */
export function openStore(
  source: StoreSource,
  warn: (message: string) => void,
  ioredisMajor = IOREDIS_MAJOR,
): OpenedStore {
  const store = openSource(source, warn, ioredisMajor);
  opened.add(store);
  return store;
}

function openSource(
  source: StoreSource,
  warn: (message: string) => void,
  ioredisMajor: number,
): OpenedStore {
  if (source.store !== undefined) {
    return (source.store === 'memory' ? MemoryLockStore.shared : source.store).connect();
  }
  const { client } = source;
  const connections = isWrappedClient(client)
    ? openWrapped(client)
    : openConnections({ ...source, client }, ioredisMajor);
  logConnectionErrors(connections.subscriber, 'pub/sub', warn);
  if (!source.client) logConnectionErrors(connections.client, 'command', warn);
  if (connections.client.isCluster && !connections.canShard) {
    const { name, major } = connections.library;
    warn(
      `${name} ${major} does not resubscribe sharded pub/sub channels after a cluster failover (${name} 6 does): release notices use classic pub/sub, and a waiter may also wake only when the holder's lease ends.`,
    );
  }
  return new RedisStore(connections, source.syncTimeout);
}

function logConnectionErrors(
  connection: { on(event: 'error', listener: (error: Error) => void): unknown },
  role: string,
  warn: (message: string) => void,
): void {
  let lastLogged = 0;
  connection.on('error', (error: Error) => {
    const time = Date.now();
    if (time - lastLogged < CONNECTION_ERROR_LOG_INTERVAL) return;
    lastLogged = time;
    warn(`Redis ${role} connection error: ${error.message}`);
  });
}
