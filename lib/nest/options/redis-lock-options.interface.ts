import type { Cluster, Redis, RedisOptions, WrappedRedisClient } from '../../stores/redis';
import type { MemoryLockStore } from '../../stores/memory';
import type { LockStore } from '../../store';
import type { ClusterConfig } from '../../stores/redis';
import type { LockLostPolicy } from '../../core';
import type { BusyStatus } from '../errors/lock-error-answer';
import type { RedisErrorStatus } from '../errors/redis-error-answer';

/** Options of `RedisLockModule.forRoot` / `forRootAsync`. */
export interface RedisLockModuleOptions {
  /**
   * ioredis options or a `redis://` / `rediss://` URL; a Sentinel group with `sentinels` and
   * `name`. The module opens its own connections (one for commands, one for pub/sub, both
   * following the primary) and closes them on shutdown. Give exactly one of `redis`,
   * `cluster`, `client` and `store`.
   */
  redis?: RedisOptions | string;
  /**
   * A Redis Cluster: `nodes` and `options` as ioredis' `new Cluster(nodes, options)` takes them.
   * The module opens a Cluster client for commands and one for (sharded) pub/sub, and closes
   * them on shutdown.
   */
  cluster?: ClusterConfig;
  /**
   * A client you own: an ioredis `Redis` or `Cluster`, or a node-redis client or Cluster client
   * wrapped with `nodeRedisClient` of `nestjs-redis-lock/node-redis`. Used for commands (and
   * connected at startup if it is not yet) and duplicated once for pub/sub (the duplicate is
   * closed on shutdown, your client never is).
   */
  client?: Redis | Cluster | WrappedRedisClient;
  /**
   * Keep the locks in this process's memory instead of Redis, for tests and single-process
   * development: `'memory'` uses one store shared by every application in the process (as apps
   * on one Redis share their locks); a `new MemoryLockStore()` of your own isolates a group of
   * apps. Same semantics as Redis within the process (re-entry, waits, leases, loss, fencing),
   * no exclusion across processes. Any other `LockStore` (a wrapper of one, a test double) is
   * used as given: the module neither connects nor closes it (see docs/testing.md).
   */
  store?: 'memory' | MemoryLockStore | LockStore;
  /** Prepended to every lock key, e.g. `'billing:'` to keep apps on one Redis apart. Default none. */
  keyPrefix?: string;
  /** Watchdog lease in ms, renewed every third of it while the owner runs. Default 30 000. */
  leaseTime?: number;
  /** Default wait for `acquire`, `run` and `@Locked`, ms (Infinity: forever). Default 10 000. */
  waitTime?: number;
  /**
   * Issue a fencing token on every outermost acquire, as Redisson's RFencedLock (a counter key
   * per lock name, kept 7 days after its last use). Per call: the `fencing` option. Default false.
   */
  fencing?: boolean;
  /** Default policy for a lock lost while `run`/`@Locked` work ran. Default `'throw'`. */
  onLockLost?: LockLostPolicy;
  /** How long `app.close()` lets locked calls finish before releasing their locks, ms. Default 5 000. */
  shutdownTimeout?: number;
  /**
   * When the application starts, connect to Redis: `'fail'` (default) fails the bootstrap naming
   * the address and the cause, at once when the connection is refused or reset or the password
   * refused, within 5 s when the address does not answer; `'warn'` logs that without delaying
   * the bootstrap; `'off'` connects in the background.
   */
  checkOnStartup?: 'fail' | 'warn' | 'off';
  /**
   * HTTP status of a call whose lock stayed busy past its wait: 409 Conflict (default), 423
   * Locked or 503 Service Unavailable (see `mapErrors`).
   */
  busyStatus?: BusyStatus;
  /**
   * HTTP status of a call that failed on Redis (LockRedisError: Redis down, not answering or
   * refusing): 503 Service Unavailable with `Retry-After: 1` (default), 500, 502 or 504 (see
   * `mapErrors`).
   */
  redisErrorStatus?: RedisErrorStatus;
  /**
   * Name lock keys in what callers receive (error bodies), in metric attributes and in span
   * attributes (`lock.key`). Keys can hold ids, so the default is false.
   */
  exposeKeys?: boolean;
  /**
   * Record OpenTelemetry spans through `@opentelemetry/api` (an optional peer, which must then be
   * installed): `lock.acquire` for the wait of each outermost acquisition and `lock.hold` for the
   * hold, children of the span active at the call (see README, "Tracing"). Default false: no
   * span, and nothing added to a lock call.
   */
  tracing?: boolean;
  /**
   * Replicas that must acknowledge every grant (Redis WAIT on the grant's connection) before an
   * acquire succeeds; a grant fewer acknowledged is released and tried again within the wait,
   * then the acquire rejects with LockRedisError. Releases wait too (best effort). Per call:
   * the `syncReplicas` option. Default 0 (replication stays asynchronous).
   */
  syncReplicas?: number;
  /** How long WAIT waits for the replicas of `syncReplicas`, ms. Default 1 000. */
  syncTimeout?: number;
  /**
   * Fair locks (`fair: true`): how long past its turn a waiter keeps its place in the queue
   * without coming back, ms (a crashed waiter delays the others by at most this after its turn;
   * a live one renews its place every third of it).
   * Default 5 000 (Redisson's is 5 min; see docs/read-write-and-fair.md).
   */
  fairQueueTimeout?: number;
  /**
   * Age of a hold (ms from its acquire) past which the watchdog stops renewing it: its lease then
   * runs out and the holder is told (`LockLostError`), as for any lost lock. Per call: the
   * `maxHold` option. Default Infinity (renewed while held).
   */
  maxHold?: number;
  /**
   * The application's name in the client registry (what the inspector, the CLI and a busy
   * caller's `LockAcquireTimeoutError.holder` name a holder by). Default: `npm_package_name`,
   * else the `name` of the application's package.json, else `'unknown'`.
   */
  appName?: string;
  /**
   * Whether this client registers itself in Redis (`redisson_lock_client:{<id>}`, one lease's
   * TTL, refreshed every third of it): what names it as a holder to the inspector, the CLI and
   * other processes' `LockAcquireTimeoutError.holder`. Turn it off when an ACL keeps the client
   * out of those keys, or to send nothing but lock commands. Default true.
   */
  clientRegistry?: boolean;
}
