/**
 * The client port: what the Redis store needs of a Redis client, and nothing more. The store
 * talks to Redis only through these interfaces; an adapter (client/ioredis/) implements them on
 * one client library and owns what is particular to it (its options, its private fields, its
 * reply error class). Shapes follow the wire (EVALSHA's numkeys-then-keys-then-args layout,
 * ioredis' connection status names), so an adapter is a thin mapping.
 */

/** One argument of a Redis command. */
export type RedisArg = string | number;

/** One command of a pipeline: its name (lower case), then its arguments. */
export type PipelineCommand = readonly [name: string, ...args: RedisArg[]];

/** What one command of a pipeline gave: its error (a refusal by Redis), else its reply. */
export type Outcome = [error: Error | null, reply: unknown];

/**
 * A connection's state, by ioredis' names: `wait` (created, not connecting until told),
 * `connecting`/`connect` (handshake), `ready` (takes commands), `reconnecting`, `close`,
 * `disconnecting`, `end` (closed for good). Another client maps its own states onto these: the
 * store only tells `ready`, `wait` and `end` apart from the rest.
 */
export type ConnectionStatus =
  'wait' | 'connecting' | 'connect' | 'ready' | 'reconnecting' | 'close' | 'disconnecting' | 'end';

/** The events the store follows on a connection. */
export interface ConnectionEvents {
  /** Ready for commands: the first time, and after every reconnect. */
  ready: () => void;
  /** The link closed; commands written and not yet answered will not be answered on it. */
  close: () => void;
  /** A connection error (refused, reset, timed out, credentials refused...). */
  error: (error: Error) => void;
}

/** A connection's life: its status and events, connecting it, closing it. */
export interface RedisConnection {
  readonly status: ConnectionStatus;
  on<E extends keyof ConnectionEvents>(event: E, listener: ConnectionEvents[E]): void;
  off<E extends keyof ConnectionEvents>(event: E, listener: ConnectionEvents[E]): void;
  /** Connects a connection created without connecting (status `wait`). */
  connect(): Promise<void>;
  /** Closes it politely (QUIT): answered once Redis has answered what came before. */
  quit(): Promise<unknown>;
  /** Closes it at once; it does not reconnect. */
  disconnect(): void;
}

/**
 * What a Lua script runs on (see LuaScript, which loads a script on NOSCRIPT with these): one
 * server, a Sentinel-managed primary, one master of a Cluster, or a Cluster client (which
 * sends each call to the master of its first key's slot).
 */
export interface ScriptRunner {
  /** A Cluster client: a script missing on a node is run with EVAL at once (see LuaScript). */
  readonly isCluster: boolean;
  /** EVALSHA `sha` `numKeys` ...keysAndArgs. */
  evalsha(sha: string, numKeys: number, keysAndArgs: readonly RedisArg[]): Promise<unknown>;
  /** EVAL `source` `numKeys` ...keysAndArgs. */
  eval(source: string, numKeys: number, keysAndArgs: readonly RedisArg[]): Promise<unknown>;
  /** SCRIPT LOAD `source` (on one server; a Cluster client never calls it). */
  scriptLoad(source: string): Promise<unknown>;
  /**
   * The write-batching hook: called right before a script call is made, so that calls made
   * while Redis is busy with earlier ones may share a socket write. A no-op where the client
   * batches on its own (or cannot); it never delays a call made while Redis is idle.
   */
  batchWrites(): void;
}

/** The store's command connection: scripts, a few plain commands, its life. */
export interface CommandClient extends ScriptRunner, RedisConnection {
  /**
   * Sends `commands` back to back (a pipeline, not a transaction) on one connection and
   * resolves each one's outcome, in order (WAIT after a script, HLEN and PTTL of one key). On
   * a Cluster the commands that name keys name keys of one slot, and the pipeline goes to the
   * master serving it.
   */
  pipeline(commands: readonly PipelineCommand[]): Promise<Outcome[]>;
  hget(key: string, field: string): Promise<string | null>;
  /**
   * Any one command (its name, lower case, then its arguments): the client registry's writes and
   * the inspector's reads. On a Cluster it goes to the master of its first key's slot.
   */
  command(name: string, args: readonly RedisArg[]): Promise<unknown>;
  /** INFO `section` (on a Cluster: of any one node). */
  info(section: string): Promise<string>;
  ping(): Promise<unknown>;
}

/** A command connection to one server or a Sentinel-managed primary. */
export interface ServerClient extends CommandClient {
  readonly isCluster: false;
}

/** A command connection to a Redis Cluster. */
export interface ClusterClient extends CommandClient {
  readonly isCluster: true;
  /**
   * The masters as the client knows them now, by slot: for each slot, the master serving it
   * (the same object for every slot a master serves), or undefined when the client knows
   * none. Scripts run on a master are not redirected (MOVED and ASK are not followed).
   */
  slotMasters(): (slot: number) => ServerClient | undefined;
  /**
   * The nodes the client knows now, each as a connection of its own: the masters, or every node
   * (replicas too: classic pub/sub subscribers may be on any). For commands that concern one node
   * (SCAN, PUBSUB NUMSUB).
   */
  nodes(role: 'master' | 'all'): ServerClient[];
}

/** The store's command connection: one server (or Sentinel primary), or a Cluster. */
export type RedisClient = ServerClient | ClusterClient;

/** Called with the channel of each message received on a channel subscribed to. */
export type MessageListener = (channel: string) => void;

/**
 * The store's pub/sub connection (a duplicate of the command one): it follows its channels
 * through reconnects (and, sharded on a Cluster, through failovers when it can: see
 * RedisConnections.canShard).
 */
export interface SubscriberConnection extends RedisConnection {
  /** SUBSCRIBE `channel`; its messages go to `onMessage`. */
  subscribe(channel: string, onMessage: MessageListener): Promise<unknown>;
  /** SSUBSCRIBE `channel` (sharded pub/sub); its messages go to `onMessage`. */
  ssubscribe(channel: string, onMessage: MessageListener): Promise<unknown>;
  unsubscribe(channel: string): Promise<unknown>;
  sunsubscribe(channel: string): Promise<unknown>;
}
