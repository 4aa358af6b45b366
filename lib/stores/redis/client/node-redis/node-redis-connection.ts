import type { ConnectionEvents, ConnectionStatus, RedisConnection } from '../redis-client';
import type { NodeRedisLife } from './node-redis-types';

/** The node-redis events behind each event of the port. */
export type EventMap = Readonly<Record<keyof ConnectionEvents, readonly string[]>>;

/**
 * A client's events as the port has them: `ready` is node-redis' `ready`; `close` its
 * `reconnecting` (the link broke and it tries again; node-redis has already failed the commands
 * written and not answered) or `end` (closed for good).
 */
export const CLIENT_EVENTS: EventMap = {
  ready: ['ready'],
  close: ['reconnecting', 'end'],
  error: ['error'],
};

/**
 * A Cluster client's events as the port has them: `ready` is `connect` (node-redis emits it once
 * the slot map is known); `close` its `disconnect`; `error` its own errors (slot map refreshes)
 * and its nodes' (`node-error`, whose second argument, the node, is not passed on).
 */
export const CLUSTER_EVENTS: EventMap = {
  ready: ['connect'],
  close: ['disconnect'],
  error: ['error', 'node-error'],
};

/**
 * A node-redis client's or Cluster client's life, as the port has it. node-redis has no status
 * name, only `isOpen` (connect() called, not closed since) and `isReady`: a client not open is
 * `wait` until it has been open (then `end`), an open one not ready is `connecting`.
 */
export class NodeRedisConnection<C extends NodeRedisLife> implements RedisConnection {
  /** Whether the client has been open since it was wrapped: closed, it is then `end`. */
  private wasOpen: boolean;
  /** The listener added to node-redis for each listener of the port, by event. */
  private readonly added = new Map<
    keyof ConnectionEvents,
    Map<unknown, (...args: unknown[]) => void>
  >();

  constructor(
    /** The node-redis client behind it. */
    readonly redis: C,
    private readonly events: EventMap,
  ) {
    this.wasOpen = redis.isOpen;
    redis.on('connect', () => (this.wasOpen = true));
  }

  get status(): ConnectionStatus {
    if (this.redis.isReady) return 'ready';
    if (this.redis.isOpen) return 'connecting';
    return this.wasOpen ? 'end' : 'wait';
  }

  on<E extends keyof ConnectionEvents>(event: E, listener: ConnectionEvents[E]): void {
    // A function of its own per listener: it passes the first argument only (`node-error` has
    // the node as its second), and off() finds it.
    const added = (...args: unknown[]) => (listener as (...args: unknown[]) => void)(args[0]);
    let listeners = this.added.get(event);
    if (!listeners) {
      listeners = new Map<unknown, (...args: unknown[]) => void>();
      this.added.set(event, listeners);
    }
    listeners.set(listener, added);
    for (const name of this.events[event]) this.redis.on(name, added);
  }

  off<E extends keyof ConnectionEvents>(event: E, listener: ConnectionEvents[E]): void {
    const added = this.added.get(event)?.get(listener);
    if (!added) return;
    this.added.get(event)!.delete(listener);
    for (const name of this.events[event]) this.redis.off(name, added);
  }

  async connect(): Promise<void> {
    this.wasOpen = true;
    await this.redis.connect();
  }

  quit(): Promise<unknown> {
    return this.redis.close();
  }

  disconnect(): void {
    try {
      this.redis.destroy();
    } catch {
      // node-redis 5 throws when the client is closed already: nothing left to close
    }
  }
}
