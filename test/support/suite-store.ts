import type { Redis } from 'ioredis';
import { MemoryLockStore } from '../../lib';
import type { TestRedis } from './redis-server';
import { watchDeclaredKeys, type UndeclaredKey } from './declared-keys';
import { NodeRedisServer } from './node-redis-server';
import { suiteRedis, type SuiteRedis } from './suite-redis';

/**
 * Every store the library's behavioural suites run on: the Redis store on ioredis (`redis`) and
 * on node-redis (`node-redis`: each app gets a node-redis client as `client`), and the memory store.
 */
const ALL_STORE_KINDS = ['redis', 'node-redis', 'memory'] as const;
export type StoreKind = (typeof ALL_STORE_KINDS)[number];
/** The stores this run's behavioural suites run on: on Valkey (on-valkey.ts), the Redis store only. */
export const STORE_KINDS: readonly StoreKind[] =
  process.env.LOCK_TEST_SERVER === 'valkey' ? ['redis'] : ALL_STORE_KINDS;

/** A suite's lock store and what a test may look at in it, by lock name (keyPrefix + key). */
export interface SuiteStore {
  readonly kind: StoreKind;
  /** What lockApp takes: the suite's Redis server (as node-redis reaches it) or its MemoryLockStore. */
  readonly target: TestRedis | NodeRedisServer | MemoryLockStore;
  /** A raw client on the suite's Redis server; undefined on the memory store. */
  readonly raw: Redis | undefined;
  /** How many commands the store has run, not counting those of this probe itself. */
  commandCount(): Promise<number>;
  /** Whether the lock exists in the store. */
  exists(name: string): Promise<boolean>;
  /** The lock's remaining lease in ms (Redis' PTTL: -2 when absent). */
  pttl(name: string): Promise<number>;
  /** Deletes the lock behind its holder's back, as another program could. */
  deleteLock(name: string): Promise<void>;
  /** A shared counter outside the lock, read and written in separate steps. */
  getCounter(counter: string): Promise<number>;
  setCounter(counter: string, value: number): Promise<void>;
}

/**
 * Jest hooks for a suite on `kind`: a Redis server (suiteRedis) or a fresh MemoryLockStore.
 * Read the store's members inside hooks and tests.
 */
export function suiteStore(kind: StoreKind): SuiteStore {
  return kind === 'memory' ? memoryStore() : redisStore(kind);
}

function redisStore(kind: 'redis' | 'node-redis'): SuiteStore {
  const server = suiteRedis();
  const nodeRedis = kind === 'node-redis' ? new NodeRedisServer(() => server.redis) : undefined;
  if (nodeRedis) beforeAll(() => void server.closing(nodeRedis));
  watchScripts(server);
  let probes = 0;
  return {
    kind,
    get target() {
      return nodeRedis ?? server.redis;
    },
    get raw() {
      return server.raw;
    },
    async commandCount() {
      const info = await server.raw.info('stats');
      return Number(/total_commands_processed:(\d+)/.exec(info)![1]) - probes++;
    },
    exists: async (name) => (await server.raw.exists(name)) === 1,
    pttl: (name) => server.raw.pttl(name),
    deleteLock: async (name) => void (await server.raw.del(name)),
    getCounter: async (counter) => Number((await server.raw.get(counter)) ?? 0),
    setCounter: async (counter, value) => void (await server.raw.set(counter, value)),
  };
}

/** The MemoryLockStore's operations (a spy counts them; each still runs). */
const MEMORY_COMMANDS = ['acquire', 'release', 'renew', 'forceUnlock', 'remainingTtl'] as const;

function memoryStore(): SuiteStore {
  const store = new MemoryLockStore();
  const counters = new Map<string, number>();
  const calls = MEMORY_COMMANDS.map((method) => jest.spyOn(store, method).mock.calls);
  return {
    kind: 'memory',
    target: store,
    raw: undefined,
    commandCount: () => Promise.resolve(calls.reduce((sum, made) => sum + made.length, 0)),
    exists: (name) =>
      Promise.resolve(store.remainingTtl({ kind: 'lock', key: name, name }) !== null),
    pttl: (name) => Promise.resolve(store.remainingTtl({ kind: 'lock', key: name, name }) ?? -2),
    deleteLock: (name) =>
      Promise.resolve(void store.forceUnlock({ kind: 'lock', key: name, name })),
    getCounter: (counter) => Promise.resolve(counters.get(counter) ?? 0),
    setCounter: (counter, value) => Promise.resolve(void counters.set(counter, value)),
  };
}

/**
 * Every script the suite's server runs declares the keys it touches (see declared-keys.ts): the
 * suite fails after its tests otherwise. The watch ends before the server stops, after what the
 * suite's tests passed to closing().
 */
function watchScripts(server: SuiteRedis): void {
  let found: UndeclaredKey[] | undefined;
  beforeAll(async () => {
    const watch = await watchDeclaredKeys(server.raw);
    server.closing({ close: async () => (found = await watch.stop()) });
  });
  afterAll(() => {
    expect(found).toEqual([]);
  });
}
