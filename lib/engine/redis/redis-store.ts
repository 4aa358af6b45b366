import { randomBytes } from 'node:crypto';
import type { Cluster } from 'ioredis';
import { LockError } from '../../lock.errors';
import {
  ReplicaSyncError,
  type AcquireReply,
  type AcquireRequest,
  type LockStore,
  type NoticeListener,
  type StoredHold,
} from '../store/lock-store';
import { renewOnCluster, RENEW_CALL_SIZE } from './cluster-renewal';
import { LockScripts } from './lock-scripts';
import type { ScriptClient } from './lua-script';
import { acquireReply, failure, redisError, releaseReply } from './replies';
import { runSynced } from './replica-sync';
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

/** The first Redis version with sharded pub/sub (SPUBLISH, SSUBSCRIBE). */
const SHARDED_PUBSUB_MAJOR = 7;

/**
 * The lock store on one Redis server, a Sentinel-managed primary or a Redis Cluster: Redisson's
 * RLock layout, one Lua script per state change (all keys of a script in the lock's slot),
 * release notices over pub/sub on Redisson's channels: sharded (SPUBLISH/SSUBSCRIBE) on a
 * Cluster of Redis >= 7 when ioredis can follow sharded channels, classic otherwise.
 */
export class RedisStore implements LockStore {
  /** The random half of every release request id (the other half is the owner's number). */
  private readonly requestIdPrefix = randomBytes(8).toString('hex');
  private readonly client: ScriptClient;
  private readonly subscriber: ScriptClient;
  /** Whether notices go over sharded pub/sub; decided once, at the first need. */
  private shardedNotices: Promise<boolean> | undefined;
  /** What sharded() found, once it has (the release's fast path needs to know). */
  private shardedKnown: boolean | undefined;
  /** Lock name of each channel subscribed to. */
  private readonly channels = new Map<string, string>();
  private listener: NoticeListener | undefined;

  constructor(
    private readonly connections: RedisConnections,
    /** How long WAIT waits for the replicas a synced acquire or release asks for, ms. */
    private readonly syncTimeout = 1_000,
  ) {
    this.client = connections.client;
    this.subscriber = connections.subscriber;
    if (!connections.canShard) this.shardedKnown = false;
    const onMessage = (channel: string, message: string) => {
      if (message !== UNLOCK_MESSAGE && message !== WAKE_ALL_MESSAGE) return;
      const name = this.channels.get(channel);
      if (name !== undefined) this.listener?.notice(name);
    };
    this.subscriber.on('message', onMessage);
    this.subscriber.on('smessage', onMessage);
    // After a reconnect ioredis subscribes again, but releases announced meanwhile are gone.
    this.subscriber.on('ready', () => this.listener?.reconnected());
  }

  acquire(request: AcquireRequest): Promise<AcquireReply> {
    const { key, name, fencing, owner } = request;
    const replicas = request.syncReplicas ?? 0;
    if (replicas > 0) return this.syncedAcquire(request, replicas);
    // The common case, one promise per call: the lock's hot path.
    return LockScripts.acquire.call(
      this.client,
      (reply) => acquireReply(reply, fencing),
      failure(key, 'acquire'),
      2,
      name,
      tokenKey(name),
      request.leaseTime,
      owner,
      fencing ? '1' : '0',
      FENCING_COUNTER_TTL,
    );
  }

  /** An acquire followed by WAIT; a grant too few replicas acknowledged is released. */
  private async syncedAcquire(request: AcquireRequest, replicas: number): Promise<AcquireReply> {
    const { key, name, fencing, owner } = request;
    const args: (string | number)[] = [name, tokenKey(name), request.leaseTime, owner];
    args.push(fencing ? '1' : '0');
    args.push(FENCING_COUNTER_TTL);
    const [reply, acknowledged] = await runSynced(
      this.client,
      LockScripts.acquire,
      replicas,
      this.syncTimeout,
      2,
      args,
    ).catch(failure(key, 'acquire'));
    const result = acquireReply(reply, fencing);
    if (!result.granted) return result;
    if (acknowledged < replicas) {
      await this.release({ key, name, owner }).catch(() => undefined);
      throw new ReplicaSyncError(key, acknowledged, replicas, this.syncTimeout);
    }
    return result;
  }

  async release(hold: StoredHold): Promise<number | null> {
    const { name, owner } = hold;
    // 32 hex digits, as Redisson's: this store's random half, then the owner's number.
    const requestId =
      this.requestIdPrefix + owner.slice(owner.lastIndexOf(':') + 1).padStart(16, '0');
    const replicas = hold.syncReplicas ?? 0;
    const sharded = this.shardedKnown;
    if (replicas === 0 && sharded === false) {
      // The common case, one promise per call: the lock's hot path.
      return LockScripts.release.call(
        this.client,
        releaseReply,
        failure(hold.key, 'release'),
        2,
        name,
        unlockLatchKey(name, requestId),
        owner,
        UNLOCK_LATCH_TTL,
        'publish',
        channelName(name),
      );
    }
    return this.releaseSynced(hold, requestId, replicas);
  }

  /** A release on sharded pub/sub, or followed by WAIT (best effort: never undone). */
  private async releaseSynced(
    hold: StoredHold,
    requestId: string,
    replicas: number,
  ): Promise<number | null> {
    const { name, owner } = hold;
    const publish = await this.publishCommand(hold.key, 'release');
    // The channel is a key only for SPUBLISH (see release.lua).
    const sharded = publish === 'spublish';
    const keys = [name, unlockLatchKey(name, requestId), ...(sharded ? [channelName(name)] : [])];
    const args = [
      ...keys,
      owner,
      UNLOCK_LATCH_TTL,
      publish,
      ...(sharded ? [] : [channelName(name)]),
    ];
    const [reply] = await runSynced(
      this.client,
      LockScripts.release,
      replicas,
      this.syncTimeout,
      keys.length,
      args,
    ).catch(failure(hold.key, 'release'));
    return releaseReply(reply);
  }

  /**
   * Renews every hold given, RENEW_CALL_SIZE per script call, all calls written at once: on a
   * Cluster grouped by master (see renewOnCluster). One result per hold: still held, lost, or
   * the LockRedisError of a call that got no answer.
   */
  async renew(holds: readonly StoredHold[], leaseTime: number): Promise<(boolean | Error)[]> {
    if (this.client.isCluster) {
      const results = await renewOnCluster(this.client as Cluster, holds, leaseTime);
      return results.map((result, i) =>
        result instanceof Error ? redisError(holds[i].key, 'renew', result) : result,
      );
    }
    const calls: Promise<(boolean | Error)[]>[] = [];
    for (let start = 0; start < holds.length; start += RENEW_CALL_SIZE) {
      const batch = holds.slice(start, start + RENEW_CALL_SIZE);
      const keysAndArgs: (string | number)[] = batch.map((hold) => hold.name);
      keysAndArgs.push(leaseTime);
      for (const hold of batch) keysAndArgs.push(hold.owner);
      calls.push(
        LockScripts.renew.run(this.client, batch.length, ...keysAndArgs).then(
          (renewed) => (renewed as unknown[]).map((value) => Number(value) === 1),
          (error: unknown) => batch.map((hold) => redisError(hold.key, 'renew', error)),
        ),
      );
    }
    return (await Promise.all(calls)).flat();
  }

  async forceUnlock(key: string, name: string): Promise<boolean> {
    const publish = await this.publishCommand(key, 'force-unlock');
    const sharded = publish === 'spublish';
    const args = sharded ? [name, channelName(name), publish] : [name, publish, channelName(name)];
    return LockScripts.forceUnlock
      .run(this.client, sharded ? 2 : 1, ...args)
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
    const subscribing = (await this.sharded())
      ? this.subscriber.ssubscribe(channel)
      : this.subscriber.subscribe(channel);
    const reply = await within(subscribing, SUBSCRIBE_TIMEOUT);
    if (reply === TIMED_OUT) {
      throw new Error(`SUBSCRIBE got no answer within ${SUBSCRIBE_TIMEOUT} ms`);
    }
  }

  async unsubscribe(name: string): Promise<void> {
    const channel = channelName(name);
    if (this.channels.get(channel) !== name) return;
    this.channels.delete(channel);
    if (await this.sharded()) await this.subscriber.sunsubscribe(channel);
    else await this.subscriber.unsubscribe(channel);
  }

  /**
   * Whether release notices use sharded pub/sub: on a Cluster whose servers have it (Redis >= 7,
   * read from INFO once) when ioredis can resubscribe sharded channels after a failover.
   */
  sharded(): Promise<boolean> {
    if (!this.connections.canShard) {
      this.shardedKnown = false;
      return Promise.resolve(false);
    }
    this.shardedNotices ??= this.client.info('server').then(
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

  private publishCommand(key: string, operation: string): Promise<'spublish' | 'publish'> {
    return this.sharded().then(
      (sharded) => (sharded ? 'spublish' : 'publish'),
      failure(key, operation),
    );
  }

  listen(listener: NoticeListener): void {
    this.listener = listener;
  }

  /** Connects both connections; rejects naming the address and the cause after `timeout` ms. */
  async connect(timeout: number): Promise<void> {
    try {
      await this.connections.connect(timeout);
      await this.sharded();
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
