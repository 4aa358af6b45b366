import { randomBytes } from 'node:crypto';
import { ReplyError, type Redis } from 'ioredis';
import { LockError, LockRedisError } from '../../lock.errors';
import type {
  AcquireReply,
  AcquireRequest,
  LockStore,
  NoticeListener,
  StoredHold,
} from '../store/lock-store';
import { LockScripts } from './lock-scripts';
import { ready, type RedisConnections } from './redis-connections';
import { TIMED_OUT, within } from '../time-limit';
import {
  channelName,
  tokenKey,
  UNLOCK_MESSAGE,
  unlockLatchKey,
  WAKE_ALL_MESSAGE,
} from './redis-names';

/** How long an unlock latch (idempotent release) stays in Redis, in ms. */
const UNLOCK_LATCH_TTL = 10_000;
/** How long a fencing counter outlives the last acquire that used it, in ms (7 days). */
const FENCING_COUNTER_TTL = 7 * 24 * 3_600_000;
/** How long a SUBSCRIBE waits for the pub/sub connection to be ready, ms (Redisson's default). */
const SUBSCRIBE_TIMEOUT = 7_500;
const NOT_GRANTED_NO_LEASE: AcquireReply = { granted: false, ttl: Infinity };

/**
 * The lock store on one Redis server or Sentinel-managed primary: Redisson's RLock layout, one
 * Lua script per state change, release notices over pub/sub on Redisson's channels.
 */
export class RedisStore implements LockStore {
  /** The random half of every release request id (the other half is the owner's number). */
  private readonly requestIdPrefix = randomBytes(8).toString('hex');
  private readonly client: Redis;
  private readonly subscriber: Redis;
  /** Lock name of each channel subscribed to. */
  private readonly channels = new Map<string, string>();
  private listener: NoticeListener | undefined;

  constructor(private readonly connections: RedisConnections) {
    this.client = connections.client;
    this.subscriber = connections.subscriber;
    this.subscriber.on('message', (channel: string, message: string) => {
      if (message !== UNLOCK_MESSAGE && message !== WAKE_ALL_MESSAGE) return;
      const name = this.channels.get(channel);
      if (name !== undefined) this.listener?.notice(name);
    });
    // After a reconnect ioredis subscribes again, but releases announced meanwhile are gone.
    this.subscriber.on('ready', () => this.listener?.reconnected());
  }

  acquire(request: AcquireRequest): Promise<AcquireReply> {
    const { name, fencing } = request;
    return LockScripts.acquire.call(
      this.client,
      (reply) => {
        // >= 0: acquired, the fencing token; < 0: busy, the holder's PTTL is -2 - reply.
        const result = Number(reply);
        if (result >= 0) return { granted: true, fencingToken: fencing ? result : undefined };
        return result === -1 ? NOT_GRANTED_NO_LEASE : { granted: false, ttl: -2 - result };
      },
      failure(request.key, 'acquire'),
      2,
      name,
      tokenKey(name),
      request.leaseTime,
      request.owner,
      fencing ? '1' : '0',
      FENCING_COUNTER_TTL,
    );
  }

  release(hold: StoredHold): Promise<number | null> {
    const { name, owner } = hold;
    // 32 hex digits, as Redisson's: this store's random half, then the owner's number.
    const requestId =
      this.requestIdPrefix + owner.slice(owner.lastIndexOf(':') + 1).padStart(16, '0');
    return LockScripts.release.call(
      this.client,
      (reply) => (reply === null ? null : Number(reply)),
      failure(hold.key, 'release'),
      2,
      name,
      unlockLatchKey(name, requestId),
      channelName(name),
      owner,
      UNLOCK_LATCH_TTL,
    );
  }

  async renew(holds: readonly StoredHold[], leaseTime: number): Promise<boolean[]> {
    const keysAndArgs: (string | number)[] = holds.map((hold) => hold.name);
    keysAndArgs.push(leaseTime);
    for (const hold of holds) keysAndArgs.push(hold.owner);
    const renewed = (await LockScripts.renew
      .run(this.client, holds.length, ...keysAndArgs)
      .catch(failure(holds[0]?.key ?? '', 'renew'))) as unknown[];
    return renewed.map((value) => Number(value) === 1);
  }

  forceUnlock(key: string, name: string): Promise<boolean> {
    return LockScripts.forceUnlock
      .run(this.client, 1, name, channelName(name))
      .then((deleted) => Number(deleted) === 1, failure(key, 'force-unlock'));
  }

  remainingTtl(key: string, name: string): Promise<number | null> {
    return this.client.pttl(name).then(
      (reply) => {
        const ttl = Number(reply);
        if (ttl === -2) return null;
        return ttl === -1 ? Infinity : ttl;
      },
      failure(key, 'inspect'),
    );
  }

  async subscribe(name: string): Promise<void> {
    const channel = channelName(name);
    this.channels.set(channel, name);
    // A SUBSCRIBE written during the connection's handshake would break its ready check.
    if (this.subscriber.status !== 'ready') await ready(this.subscriber, SUBSCRIBE_TIMEOUT);
    // Unsubscribed while waiting (its queue was dropped): a late SUBSCRIBE would stay forever.
    if (this.channels.get(channel) !== name) return;
    const reply = await within(this.subscriber.subscribe(channel), SUBSCRIBE_TIMEOUT);
    if (reply === TIMED_OUT)
      throw new Error(`SUBSCRIBE got no answer within ${SUBSCRIBE_TIMEOUT} ms`);
  }

  async unsubscribe(name: string): Promise<void> {
    const channel = channelName(name);
    if (this.channels.get(channel) !== name) return;
    this.channels.delete(channel);
    await this.subscriber.unsubscribe(channel);
  }

  listen(listener: NoticeListener): void {
    this.listener = listener;
  }

  /** Connects both connections; rejects naming the address and the cause after `timeout` ms. */
  async connect(timeout: number): Promise<void> {
    try {
      await this.connections.connect(timeout);
    } catch (error) {
      throw new LockError(
        `Cannot reach Redis at ${this.connections.address}: ${(error as Error).message}.`,
        { cause: error },
      );
    }
  }

  /** Round-trip time of a PING on the command connection, ms. */
  async ping(): Promise<number> {
    const started = performance.now();
    await this.client.ping();
    return performance.now() - started;
  }

  /** Closes the connections the store opened. */
  close(): Promise<void> {
    return this.connections.close();
  }
}

/** Turns a failed Redis call into a LockRedisError for `key`. */
function failure(key: string, operation: string): (error: unknown) => never {
  return (error) => {
    throw new LockRedisError(key, operation, error, error instanceof ReplyError);
  };
}
