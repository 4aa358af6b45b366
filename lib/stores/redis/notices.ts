import type { NoticeListener } from '../../store';
import { TIMED_OUT, within } from '../../time/time-limit';
import type { PublishCommand } from './scripts/script-definition';
import { ready, type RedisConnections, type SubscriberConnection } from './client';

/** How long a SUBSCRIBE waits for the pub/sub connection to be ready, ms (Redisson's default). */
const SUBSCRIBE_TIMEOUT = 7_500;

/** What a release publishes on a lock's channel (Redisson's LockPubSub.UNLOCK_MESSAGE). */
const UNLOCK_MESSAGE = '0';

/** The first Redis version with sharded pub/sub (SPUBLISH, SSUBSCRIBE). */
const SHARDED_PUBSUB_MAJOR = 7;

/**
 * The store's pub/sub side: one subscription per channel on the subscriber connection, every
 * message of a subscribed channel passed to the listener. Channels are sharded (SSUBSCRIBE, as
 * every kind's scripts then SPUBLISH, as Redisson does) on a Cluster of Redis >= 7 when ioredis
 * can follow sharded channels after a failover; classic elsewhere, and for channels marked
 * classic (a kind whose scripts cannot SPUBLISH: none at present).
 */
export class RedisNotices {
  private readonly subscriber: SubscriberConnection;
  /** Whether notices go over sharded pub/sub; decided once, at the first need. */
  private shardedNotices: Promise<boolean> | undefined;
  /** What sharded() found, once it has (the release's fast path needs to know). */
  shardedKnown: boolean | undefined;
  /** Channels subscribed to. */
  private readonly channels = new Set<string>();
  /** Channels of kinds whose scripts publish classic messages. */
  private readonly classic = new Set<string>();
  private listener: NoticeListener | undefined;
  /** Where the subscriber's messages go: to the listener, for a channel subscribed to. */
  private readonly onMessage: (channel: string) => void;

  constructor(private readonly connections: RedisConnections) {
    this.subscriber = connections.subscriber;
    if (!connections.canShard) this.shardedKnown = false;
    this.onMessage = (channel: string) => {
      if (this.channels.has(channel)) this.listener?.notice(channel);
    };
    // After a reconnect ioredis subscribes again, but messages sent meanwhile are gone.
    this.subscriber.on('ready', () => this.listener?.reconnected());
  }

  listen(listener: NoticeListener): void {
    this.listener = listener;
  }

  /** Notes that `channel` gets classic messages (its kind's scripts PUBLISH). */
  classicChannel(channel: string): void {
    this.classic.add(channel);
  }

  async subscribe(channel: string): Promise<void> {
    this.channels.add(channel);
    // A SUBSCRIBE written during the connection's handshake would break its ready check.
    if (this.subscriber.status !== 'ready') await ready(this.subscriber, SUBSCRIBE_TIMEOUT);
    // Unsubscribed while waiting: a late SUBSCRIBE would stay forever.
    if (!this.channels.has(channel)) return;
    const subscribing = (await this.shardedChannel(channel))
      ? this.subscriber.ssubscribe(channel, this.onMessage)
      : this.subscriber.subscribe(channel, this.onMessage);
    const reply = await within(subscribing, SUBSCRIBE_TIMEOUT);
    if (reply === TIMED_OUT) {
      throw new Error(`SUBSCRIBE got no answer within ${SUBSCRIBE_TIMEOUT} ms`);
    }
  }

  async unsubscribe(channel: string): Promise<void> {
    if (!this.channels.delete(channel)) return;
    const sharded = await this.shardedChannel(channel);
    this.classic.delete(channel);
    if (sharded) await this.subscriber.sunsubscribe(channel);
    else await this.subscriber.unsubscribe(channel);
  }

  /** Publishes Redisson's unlock message ('0') on `channel`, sharded as its releases are. */
  async announce(channel: string): Promise<void> {
    const command = (await this.shardedChannel(channel)) ? 'spublish' : 'publish';
    await this.connections.client.command(command, [channel, UNLOCK_MESSAGE]);
  }

  private async shardedChannel(channel: string): Promise<boolean> {
    return !this.classic.has(channel) && (await this.sharded());
  }

  /**
   * Whether notices use sharded pub/sub: on a Cluster whose servers have it (Redis
   * >= 7, read from INFO once) when ioredis can resubscribe sharded channels after a failover.
   */
  sharded(): Promise<boolean> {
    if (!this.connections.canShard) {
      this.shardedKnown = false;
      return Promise.resolve(false);
    }
    this.shardedNotices ??= this.connections.client.info('server').then(
      (info) =>
        (this.shardedKnown =
          Number(/redis_version:(\d+)/.exec(info)?.[1] ?? 0) >= SHARDED_PUBSUB_MAJOR),
      (error: unknown) => {
        this.shardedNotices = undefined;
        throw error;
      },
    );
    return this.shardedNotices;
  }

  /** How releases (and the other notices of every kind's scripts) are announced. */
  publishCommand(): Promise<PublishCommand> {
    return this.sharded().then((sharded) => (sharded ? 'spublish' : 'publish'));
  }
}
