import { describe as describeValue, keyPrefixCheck } from '../core';
import { LockError, LockKeyError, LockOptionsError, LockRedisError } from '../errors';
import type { ClientInfo } from '../store';
import {
  channelName,
  CLIENT_KEY_PATTERN,
  clientIdOfKey,
  isReplyError,
  openConnections,
  readClientInfo,
  ready,
  rwChannelName,
  semaphoreChannelName,
  type ClusterConfig,
  type RedisClient,
  type RedisConnections,
  type RedisOptions,
} from '../stores/redis';
import { ClientLookup } from './client-lookup';
import type { ClientSummary, LockDescription, LockSummary } from './lock-description';
import { globEscape, scanNames } from './lock-scan';
import { readLock } from './read-lock';
import { waitingOn } from './waiting-count';

/** Where LockInspector.connect() finds Redis: exactly one of `redis` and `cluster`. */
export interface InspectorConnectOptions {
  /** ioredis options or a `redis://` / `rediss://` URL (a Sentinel group with `sentinels`). */
  redis?: RedisOptions | string;
  /** A Redis Cluster: `nodes` and `options` as ioredis' `new Cluster(nodes, options)` takes them. */
  cluster?: ClusterConfig;
  /** The applications' `keyPrefix`. Default none. */
  keyPrefix?: string;
  /** How long to wait for the connection, ms. Default 5 000. */
  connectTimeout?: number;
}

/** Which held locks list() returns. */
export interface ListOptions {
  /** A SCAN pattern of keys, without `keyPrefix` (`order:*`). Default `*`. */
  match?: string;
  /** At most this many locks. Default 100 (list), 10 000 (clients' counts). */
  limit?: number;
}

/** list() with each lock's `waiting` count (one more read per lock found). */
export interface ListWaitingOptions extends ListOptions {
  /** Count the processes waiting for each lock, as describe() does. */
  waiting: true;
}

/** Names that belong to a lock but are not one: channels' companions, tokens, latches, queues. */
const AUXILIARY =
  /^redisson_(lock__channel|lock_token|unlock_latch|lock_queue|lock_timeout|lock_client|rwlock|sc):|:rwlock_timeout:/;

/** Whether a summary is of a held lock (a semaphore: with a permit in use). */
function isHeld(lock: LockSummary): boolean {
  if (lock.kind === 'semaphore') return (lock.permits?.used ?? 0) > 0;
  return lock.kind !== 'free' && lock.kind !== 'other' && lock.holders.length > 0;
}

/** The channel a lock's waiters listen on (Redisson's, by the kind found). */
function waitChannel(lock: LockSummary): string {
  if (lock.kind === 'read-write') return rwChannelName(lock.name);
  if (lock.kind === 'semaphore') return semaphoreChannelName(lock.name);
  return channelName(lock.name);
}

function checkLimit(limit: unknown, fallback: number): number {
  if (limit === undefined) return fallback;
  if (typeof limit !== 'number' || !Number.isInteger(limit) || limit < 1 || limit > 1_000_000) {
    throw new LockOptionsError(
      'limit',
      `expected a whole number from 1 to 1000000, got ${describeValue(limit)}.`,
    );
  }
  return limit;
}

/**
 * Who holds which lock, read from Redis (it only reads: `forceUnlock` is LockService's): what
 * lives under a key (`describe`), the held locks by pattern (`list`), and the clients registered
 * in Redis with the number of locks each holds (`clients`). Injected where RedisLockModule is
 * imported (on the module's connection), or opened on its own with `LockInspector.connect()`
 * (then `close()` it). Redis only: with the memory store its methods reject.
 */
export class LockInspector {
  private readonly client: RedisClient | undefined;
  /** Why this inspector cannot read (the memory store), when it cannot. */
  private readonly unavailable: LockError | undefined;

  /**
   * An inspector on a Redis command client (use `LockInspector.connect()` or inject it), or one
   * whose every method rejects with `unavailable`. `owned`: connections close() closes.
   */
  constructor(
    source: RedisClient | LockError,
    /** The applications' `keyPrefix`. */
    readonly keyPrefix = '',
    private readonly owned?: RedisConnections,
  ) {
    if (source instanceof LockError) this.unavailable = source;
    else this.client = source;
  }

  /** Connects to Redis (rejects with LockError naming the address and the cause). */
  static async connect(options: InspectorConnectOptions): Promise<LockInspector> {
    if ((options.redis === undefined) === (options.cluster === undefined)) {
      throw new LockOptionsError('redis', 'give exactly one of redis and cluster.');
    }
    const keyPrefix = keyPrefixCheck(options.keyPrefix ?? '', 'keyPrefix');
    const connections = openConnections({ redis: options.redis, cluster: options.cluster });
    try {
      await ready(connections.client, options.connectTimeout ?? 5_000);
    } catch (error) {
      await connections.close();
      throw new LockError(
        `Cannot reach Redis at ${connections.address}: ${(error as Error).message}.`,
        { cause: error },
      );
    }
    return new LockInspector(connections.client, keyPrefix, connections);
  }

  /**
   * What lives under `key` now: its kind, holders (owner id, hold count, mode, and the process
   * of a registered client), remaining lease, last fencing token, fair queue with each waiter's
   * deadline, a semaphore's permits, and how many processes wait for it.
   */
  async describe(key: string): Promise<LockDescription> {
    const client = this.redis();
    if (typeof key !== 'string' || key === '') {
      throw new LockKeyError(
        `describe() needs a lock key (a non-empty string), got ${describeValue(key)}.`,
      );
    }
    return this.reading(key, async () => {
      const lock = await new ClientLookup(client).resolve(
        await readLock(client, this.keyPrefix, key),
      );
      return { ...lock, waiting: await waitingOn(client, waitChannel(lock)) };
    });
  }

  /**
   * The held locks whose keys match `match` (a SCAN pattern, without keyPrefix), at most `limit`,
   * sorted by key: SCAN in batches on the server or on every master of a Cluster, then one read
   * per lock hash or string found. With `waiting: true`, each lock also gets its `waiting` count
   * (PUBSUB NUMSUB of its channel, as describe()).
   */
  list(options: ListWaitingOptions): Promise<LockDescription[]>;
  list(options?: ListOptions): Promise<LockSummary[]>;
  async list(options: ListOptions & { waiting?: boolean } = {}): Promise<LockSummary[]> {
    const client = this.redis();
    const match = options.match ?? '*';
    if (typeof match !== 'string' || match === '') {
      throw new LockOptionsError('match', `expected a SCAN pattern, got ${describeValue(match)}.`);
    }
    const limit = checkLimit(options.limit, 100);
    const lookup = new ClientLookup(client);
    const found: LockSummary[] = [];
    const prefix = this.keyPrefix;
    await this.reading(match, () =>
      scanNames(client, globEscape(prefix) + match, async (names, node) => {
        const candidates = names.filter((name) => !AUXILIARY.test(name));
        const types = await node.pipeline(candidates.map((name) => ['type', name] as const));
        const keys = candidates
          .filter((_, i) => types[i][1] === 'hash' || types[i][1] === 'string')
          .map((name) => name.slice(prefix.length));
        const locks = await Promise.all(keys.map((key) => readLock(client, prefix, key)));
        for (const lock of locks) if (isHeld(lock)) found.push(await lookup.resolve(lock));
        return found.length >= limit;
      }),
    );
    const locks = found
      .sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0))
      .slice(0, limit);
    if (options.waiting !== true) return locks;
    return this.reading(match, () =>
      Promise.all(
        locks.map(async (lock) => ({
          ...lock,
          waiting: await waitingOn(client, waitChannel(lock)),
        })),
      ),
    );
  }

  /**
   * Every client registered in Redis (every application on it, whatever its keyPrefix), and every
   * unregistered client that holds one of the locks list() finds, each with how many of those
   * locks it holds (`options`: list()'s, default limit 10 000). Sorted by app, host and pid;
   * unknown clients last.
   */
  async clients(options: ListOptions = {}): Promise<ClientSummary[]> {
    const client = this.redis();
    const limit = checkLimit(options.limit, 10_000);
    const registered = new Map<string, ClientInfo>();
    await this.reading('clients', () =>
      scanNames(client, CLIENT_KEY_PATTERN, async (names) => {
        const ids = names.map(clientIdOfKey).filter((id) => id !== undefined);
        const infos = await Promise.all(ids.map((id) => readClientInfo(client, id)));
        infos.forEach((info, i) => info && registered.set(ids[i], info));
        return false;
      }),
    );
    const counts = new Map<string, number>();
    for (const lock of await this.list({ ...options, limit })) {
      for (const id of new Set(lock.holders.map((holder) => holder.clientId))) {
        counts.set(id, (counts.get(id) ?? 0) + 1);
      }
    }
    const ids = new Set([...registered.keys(), ...counts.keys()]);
    return [...ids]
      .map((id) => ({ clientId: id, client: registered.get(id), locks: counts.get(id) ?? 0 }))
      .sort(byClient);
  }

  /** Closes the connections connect() opened; an injected inspector closes nothing. */
  async close(): Promise<void> {
    await this.owned?.close();
  }

  private redis(): RedisClient {
    if (this.client === undefined) throw this.unavailable!;
    return this.client;
  }

  /** Runs a read, its Redis failure as LockRedisError (`refused` when Redis answered an error). */
  private async reading<T>(key: string, read: () => Promise<T>): Promise<T> {
    try {
      return await read();
    } catch (error) {
      if (error instanceof LockError) throw error;
      throw new LockRedisError(key, 'inspect', error, isReplyError(error));
    }
  }
}

/** Registered clients by app, host, pid (then id); unknown ones last. */
function byClient(a: ClientSummary, b: ClientSummary): number {
  if (a.client === undefined || b.client === undefined) {
    return (
      Number(a.client === undefined) - Number(b.client === undefined) ||
      a.clientId.localeCompare(b.clientId)
    );
  }
  return (
    a.client.app.localeCompare(b.client.app) ||
    a.client.host.localeCompare(b.client.host) ||
    a.client.pid - b.client.pid ||
    a.clientId.localeCompare(b.clientId)
  );
}
