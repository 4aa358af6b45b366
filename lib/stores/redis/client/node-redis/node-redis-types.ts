/**
 * What the adapter uses of a node-redis client (the `redis` package, or `@redis/client`, 5 and
 * 6), described by shape: the library never loads node-redis (the user's own client is passed
 * in), and these shapes hold for every client, cluster and type mapping node-redis makes.
 */

/** One argument of a node-redis command. */
type CommandArgument = string;

/** The options of one command the adapter sends (see RESP2_REPLIES). */
export interface CommandOptions {
  readonly typeMapping: Readonly<Record<number, unknown>>;
}

/** The EventEmitter side of a node-redis client or cluster. */
export interface NodeRedisEmitter {
  on(event: string, listener: (...args: unknown[]) => void): unknown;
  off(event: string, listener: (...args: unknown[]) => void): unknown;
}

/**
 * A pub/sub listener: node-redis calls it with the message, then the channel (strings, as the
 * adapter subscribes; node-redis' type also allows its buffer mode's Buffers).
 */
export type PubSubListener = (message: unknown, channel: unknown) => void;

/** The pub/sub commands of a node-redis client or cluster. */
export interface NodeRedisPubSub {
  subscribe(channels: string, listener: PubSubListener): Promise<unknown>;
  unsubscribe(channels: string, listener: PubSubListener): Promise<unknown>;
  sSubscribe(channels: string, listener: PubSubListener): Promise<unknown>;
  sUnsubscribe(channels: string, listener: PubSubListener): Promise<unknown>;
}

/** What a node-redis client and cluster have alike: their life. */
export interface NodeRedisLife extends NodeRedisEmitter, NodeRedisPubSub {
  /** Connected or connecting (connect() called, not closed since). */
  readonly isOpen: boolean;
  /** Connected and ready for commands. */
  readonly isReady: boolean;
  connect(): Promise<unknown>;
  /** Closes once the commands written have been answered. */
  close(): Promise<unknown>;
  /** Closes at once. */
  destroy(): unknown;
}

/** A node-redis client of one server: `createClient(...)`. */
export interface NodeRedisClient extends NodeRedisLife {
  /** Its options (the URL or socket it connects to: for messages). */
  readonly options?: NodeRedisOptions;
  sendCommand(args: CommandArgument[], options?: CommandOptions): Promise<unknown>;
  duplicate(): NodeRedisClient;
}

/** A node of a Cluster as node-redis' slot map has it (`cluster.masters`, `cluster.replicas`). */
export interface NodeRedisClusterNode {
  /** `host:port`. */
  readonly address: string;
  /** Its command connection, once node-redis has made it. */
  readonly client?: NodeRedisClient;
}

/** A node-redis Cluster client: `createCluster(...)`. */
export interface NodeRedisCluster extends NodeRedisLife {
  sendCommand(
    firstKey: string | undefined,
    isReadonly: boolean | undefined,
    args: CommandArgument[],
    options?: CommandOptions,
  ): Promise<unknown>;
  duplicate(overrides?: { minimizeConnections?: boolean }): NodeRedisCluster;
  /** The masters node-redis knows now (its slot map, refreshed on MOVED and reconnects). */
  readonly masters: readonly NodeRedisClusterNode[];
  /** Its replicas (connected only with `useReplicas`). */
  readonly replicas: readonly NodeRedisClusterNode[];
  /** For each slot, the shard serving it. */
  readonly slots: readonly ({ readonly master: NodeRedisClusterNode } | undefined)[];
  /** Its options as given (a public field despite its underscore): the startup nodes, for messages. */
  readonly _options?: { readonly rootNodes?: readonly NodeRedisOptions[] };
}

/** Where a node-redis client connects: a URL or a socket. */
export interface NodeRedisOptions {
  readonly url?: string;
  readonly socket?: { readonly host?: string; readonly port?: number; readonly path?: string };
}
