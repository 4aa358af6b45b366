import { ReplyError, type Cluster, type Redis } from 'ioredis';
import type {
  ClusterClient,
  ConnectionEvents,
  ConnectionStatus,
  MessageListener,
  Outcome,
  PipelineCommand,
  RedisArg,
  RedisClient,
  RedisConnection,
  ServerClient,
  SubscriberConnection,
} from '../redis-client';
import { recogniseReplyErrors } from '../reply-errors';
import { batchWrites } from './write-batching';

// ioredis rejects a command Redis refused with its ReplyError (or a subclass).
recogniseReplyErrors((error) => error instanceof ReplyError);

/** An ioredis connection's life, as the port has it. */
abstract class IoredisConnection<C extends Redis | Cluster> implements RedisConnection {
  constructor(
    /** The ioredis connection behind it. */
    readonly redis: C,
  ) {}

  get status(): ConnectionStatus {
    return this.redis.status;
  }

  on<E extends keyof ConnectionEvents>(event: E, listener: ConnectionEvents[E]): void {
    this.redis.on(event, listener);
  }

  off<E extends keyof ConnectionEvents>(event: E, listener: ConnectionEvents[E]): void {
    this.redis.off(event, listener);
  }

  connect(): Promise<void> {
    return this.redis.connect();
  }

  quit(): Promise<unknown> {
    return this.redis.quit();
  }

  disconnect(): void {
    this.redis.disconnect();
  }
}

/** Scripts and the store's plain commands on an ioredis connection or Cluster client. */
abstract class IoredisCommands<C extends Redis | Cluster> extends IoredisConnection<C> {
  evalsha(sha: string, numKeys: number, keysAndArgs: readonly RedisArg[]): Promise<unknown> {
    return this.redis.evalsha(sha, numKeys, ...keysAndArgs);
  }

  eval(source: string, numKeys: number, keysAndArgs: readonly RedisArg[]): Promise<unknown> {
    return this.redis.eval(source, numKeys, ...keysAndArgs);
  }

  scriptLoad(source: string): Promise<unknown> {
    return this.redis.script('LOAD', source);
  }

  async pipeline(commands: readonly PipelineCommand[]): Promise<Outcome[]> {
    const outcomes = await this.redis.pipeline(commands as unknown as unknown[][]).exec();
    if (!outcomes) throw new Error('the pipeline was discarded');
    return outcomes;
  }

  hget(key: string, field: string): Promise<string | null> {
    return this.redis.hget(key, field);
  }

  command(name: string, args: readonly RedisArg[]): Promise<unknown> {
    return this.redis.call(name, ...args);
  }

  info(section: string): Promise<string> {
    return this.redis.info(section);
  }

  ping(): Promise<unknown> {
    return this.redis.ping();
  }
}

/**
 * One ioredis connection (a server, a Sentinel-managed primary, or one master of a Cluster):
 * script calls go through the write batching (see batchWrites).
 */
export class IoredisServer extends IoredisCommands<Redis> implements ServerClient {
  readonly isCluster = false;

  batchWrites(): void {
    batchWrites(this.redis);
  }
}

/**
 * An ioredis Cluster client. Owns the slot table: which master serves a slot, from the
 * client's own map (refreshed by ioredis on MOVED and on its slots refresh). Not batched: its
 * commands go out on one connection per node.
 */
export class IoredisCluster extends IoredisCommands<Cluster> implements ClusterClient {
  readonly isCluster = true;

  batchWrites(): void {}

  slotMasters(): (slot: number) => ServerClient | undefined {
    const masters = new Map(this.redis.nodes('master').map((node) => [nodeKey(node), node]));
    const { slots } = this.redis;
    return (slot) => {
      const master = masters.get(slots[slot]?.[0] ?? '');
      return master && serverOf(master);
    };
  }

  nodes(role: 'master' | 'all'): ServerClient[] {
    return this.redis.nodes(role).map(serverOf);
  }
}

/** A node's key in ioredis' slot table: `host:port`. */
function nodeKey(node: Redis): string {
  return `${node.options.host}:${node.options.port}`;
}

/** The port's client on an ioredis connection: one per connection (see serverOf). */
const adapters = new WeakMap<Redis | Cluster, RedisClient>();

function serverOf(connection: Redis): IoredisServer {
  return ioredisClient(connection) as IoredisServer;
}

/**
 * The port's command client on an ioredis Redis or Cluster: the same object for the same
 * connection, so that what is kept per client (a script being loaded) is kept once.
 */
export function ioredisClient(connection: Redis | Cluster): RedisClient {
  let client = adapters.get(connection);
  if (!client) {
    client = connection.isCluster
      ? new IoredisCluster(connection as Cluster)
      : new IoredisServer(connection as Redis);
    adapters.set(connection, client);
  }
  return client;
}

/**
 * The port's pub/sub connection on an ioredis Redis or Cluster (a duplicate of the command
 * one, made with autoResubscribe and, on a Cluster, shardedSubscribers as the store needs).
 */
export class IoredisSubscriber
  extends IoredisConnection<Redis | Cluster>
  implements SubscriberConnection
{
  private readonly classic = new Map<string, MessageListener>();
  private readonly sharded = new Map<string, MessageListener>();

  constructor(redis: Redis | Cluster) {
    super(redis);
    redis.on('message', (channel: string) => this.classic.get(channel)?.(channel));
    redis.on('smessage', (channel: string) => this.sharded.get(channel)?.(channel));
  }

  subscribe(channel: string, onMessage: MessageListener): Promise<unknown> {
    this.classic.set(channel, onMessage);
    return this.redis.subscribe(channel);
  }

  ssubscribe(channel: string, onMessage: MessageListener): Promise<unknown> {
    this.sharded.set(channel, onMessage);
    return this.redis.ssubscribe(channel);
  }

  unsubscribe(channel: string): Promise<unknown> {
    this.classic.delete(channel);
    return this.redis.unsubscribe(channel);
  }

  sunsubscribe(channel: string): Promise<unknown> {
    this.sharded.delete(channel);
    return this.redis.sunsubscribe(channel);
  }
}
