import type { MessageListener, SubscriberConnection } from '../redis-client';
import { CLIENT_EVENTS, NodeRedisConnection, type EventMap } from './node-redis-connection';
import type { NodeRedisLife, PubSubListener } from './node-redis-types';

/**
 * A Cluster subscriber's events: `ready` is also `node-ready`, the (re)connection of one of its
 * pub/sub connections (one per master for sharded channels, one for classic channels), after
 * which node-redis has subscribed again but messages sent meanwhile are gone.
 */
export const CLUSTER_SUBSCRIBER_EVENTS: EventMap = {
  ready: ['connect', 'node-ready'],
  close: ['disconnect'],
  error: ['error', 'node-error'],
};

/**
 * The port's pub/sub connection on a node-redis client or Cluster client (a duplicate of the
 * command one). node-redis subscribes again after a reconnect, and on a Cluster follows a sharded
 * channel to the master now serving its slot (on MOVED, and with node-redis 6 when a master it
 * lost is gone from the slot map).
 */
export class NodeRedisSubscriber
  extends NodeRedisConnection<NodeRedisLife>
  implements SubscriberConnection
{
  private readonly classic = new Map<string, MessageListener>();
  private readonly sharded = new Map<string, MessageListener>();
  /** Given to node-redis for every classic channel (one function: subscribing twice adds none). */
  private readonly onClassic: PubSubListener = (_message, channel) =>
    this.classic.get(String(channel))?.(String(channel));
  private readonly onSharded: PubSubListener = (_message, channel) =>
    this.sharded.get(String(channel))?.(String(channel));

  constructor(redis: NodeRedisLife, cluster: boolean) {
    super(redis, cluster ? CLUSTER_SUBSCRIBER_EVENTS : CLIENT_EVENTS);
  }

  subscribe(channel: string, onMessage: MessageListener): Promise<unknown> {
    this.classic.set(channel, onMessage);
    return this.redis.subscribe(channel, this.onClassic);
  }

  ssubscribe(channel: string, onMessage: MessageListener): Promise<unknown> {
    this.sharded.set(channel, onMessage);
    return this.redis.sSubscribe(channel, this.onSharded);
  }

  unsubscribe(channel: string): Promise<unknown> {
    this.classic.delete(channel);
    return this.redis.unsubscribe(channel, this.onClassic);
  }

  sunsubscribe(channel: string): Promise<unknown> {
    this.sharded.delete(channel);
    return this.redis.sUnsubscribe(channel, this.onSharded);
  }
}
