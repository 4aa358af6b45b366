import { randomBytes } from 'node:crypto';
import { LockError, ReplicaSyncError } from '../../errors';
import {
  type AcquireReply,
  type AcquireRequest,
  type FairQueuePort,
  type FastPathPort,
  type HoldKind,
  type PermitCountPort,
  type LockStore,
  type LockTarget,
  type NoticeListener,
  type StoredHold,
} from '../../store';
import { DEFAULT_PLACE_TIMEOUT, fairKind, fairLeave, fairUndo } from './kinds/fair-kind';
import { forceUnlockCall } from './kinds/force-unlock';
import { permitKind, permitsAvailable, permitsForceUnlock } from './kinds/permit-kind';
import { acquirePlain, plainKind, releasePlain } from './kinds/plain-kind';
import { readKind, writeKind } from './kinds/read-write-kind';
import type { RedisKind, ScriptCall } from './kinds/redis-kind';
import type { ScriptClient } from './lua-script';
import { MultiLock } from './multi-lock';
import { acquireReply, failure, redisError, releaseReply } from './replies';
import { runSynced } from './replica-sync';
import type { ConnectionState } from './connection-state';
import type { RedisConnections } from './redis-connections';
import { RedisNotices } from './notices';
import { renewHolds } from './renewal';
import { releaseRequestId, unlockLatchKey } from './redis-names';

/** The store side of each kind but `multi` (see MultiLock). */
const KINDS: Record<Exclude<HoldKind, 'multi'>, RedisKind> = {
  lock: plainKind,
  fair: fairKind,
  read: readKind,
  write: writeKind,
  permit: permitKind,
};
/** How long a release sent before its connection broke waits for its resent answer, ms. */
const RELEASE_RESEND_GRACE = 500;
/**
 * The lock store on one Redis server, a Sentinel-managed primary or a Redis Cluster: Redisson's
 * layout for each kind of hold (kinds/), one Lua script per state change (all keys of a script
 * in one slot), messages over pub/sub on Redisson's channels: sharded (SPUBLISH/SSUBSCRIBE) for
 * every kind on a Cluster of Redis >= 7 when ioredis can follow sharded channels, as Redisson;
 * classic otherwise.
 */
export class RedisStore implements LockStore, FairQueuePort, PermitCountPort, FastPathPort {
  /** The random half of every release request id (the other half is the owner's number). */
  private readonly requestIdPrefix = randomBytes(8).toString('hex');
  private readonly client: ScriptClient;
  private readonly commands: ConnectionState;
  private readonly multi: MultiLock;
  private readonly notices: RedisNotices;
  /** The place timeout of this store's fair waiters (their last request's), ms. */
  private fairPlaceTimeout = DEFAULT_PLACE_TIMEOUT;

  constructor(
    private readonly connections: RedisConnections,
    /** How long WAIT waits for the replicas a synced acquire or release asks for, ms. */
    private readonly syncTimeout = 1_000,
  ) {
    this.client = connections.client;
    this.commands = connections.commands;
    this.notices = new RedisNotices(connections);
    this.multi = new MultiLock({
      run: (call, replicas) => this.runCall(call, replicas),
      sharded: this.client.isCluster,
      syncTimeout,
      publish: () => this.notices.publishCommand(),
      requestId: (owner) => releaseRequestId(this.requestIdPrefix, owner, 'multi'),
    });
  }

  acquire(request: AcquireRequest): Promise<AcquireReply> {
    const { key } = request;
    const replicas = request.syncReplicas ?? 0;
    const acquire = () => {
      if (request.kind === 'multi') return this.multi.acquire(request);
      if (request.kind === 'fair')
        this.fairPlaceTimeout = request.placeTimeout ?? this.fairPlaceTimeout;
      if (request.kind !== 'lock' || replicas > 0) return this.acquireBy(request, replicas);
      return acquirePlain(this.client, request, acquireReply, failure(key, 'acquire'));
    };
    return this.commands.send(key, 'acquire', acquire, 0, (reply) => this.late(request, reply));
  }

  /**
   * Frees a grant answered after its caller was told the request failed (connection closed),
   * unless the owner id may be in use again (a fair waiter's, a downgrade's): HoldCalls knows.
   */
  private late(request: AcquireRequest, reply: AcquireReply): void {
    if (!reply.granted || request.kind === 'fair' || request.kind === 'read') return;
    void this.release({ ...request, syncReplicas: 0 }).catch(() => undefined);
  }

  acquireInto(
    request: AcquireRequest,
    answered: (reply: AcquireReply) => void,
    failed: (error: unknown) => void,
  ): void {
    if (request.kind !== 'lock' || (request.syncReplicas ?? 0) > 0 || this.commands.down()) {
      this.acquire(request).then(answered, failed);
      return;
    }
    const [ok, fail] = this.commands.track(answered, (error) =>
      failed(redisError(request.key, 'acquire', error)),
    );
    const read = (reply: unknown) => {
      const result = acquireReply(reply);
      if (!ok(result)) this.late(request, result);
    };
    void acquirePlain(this.client, request, read, fail);
  }

  /** An acquire of any kind, followed by WAIT when replicas must acknowledge it. */
  private async acquireBy(request: AcquireRequest, replicas: number): Promise<AcquireReply> {
    const kind = KINDS[request.kind as Exclude<HoldKind, 'multi'>];
    const failed = failure(request.key, 'acquire');
    const publish = kind.shardable ? await this.notices.publishCommand().catch(failed) : 'publish';
    const [reply, acknowledged] = await this.runCall(
      kind.acquire(request, publish),
      replicas,
    ).catch(failed);
    const result = kind.acquired(reply, request);
    if (result.granted && acknowledged < replicas) {
      const undo =
        request.kind === 'fair'
          ? this.runCall(fairUndo(request, publish, this.fairPlaceTimeout), 0)
          : this.release({ ...request, syncReplicas: 0 });
      await undo.catch(() => undefined);
      throw new ReplicaSyncError(request.key, acknowledged, replicas, this.syncTimeout);
    }
    return result;
  }

  /** Unsent while down; resent after a reconnect (the unlock latch answers it again). */
  release(hold: StoredHold): Promise<number | null> {
    const release = () => {
      const requestId = releaseRequestId(this.requestIdPrefix, hold.owner, hold.kind);
      if (this.plainRelease(hold)) {
        return releasePlain(
          this.client,
          hold,
          requestId,
          releaseReply,
          failure(hold.key, 'release'),
        );
      }
      if (hold.kind === 'multi') return this.multi.release(hold, requestId);
      return this.releaseBy(hold, requestId, hold.syncReplicas ?? 0);
    };
    return this.commands.send(hold.key, 'release', release, RELEASE_RESEND_GRACE);
  }

  releaseInto(
    hold: StoredHold,
    answered: (listeners: number | null) => void,
    failed: (error: unknown) => void,
  ): void {
    if (!this.plainRelease(hold) || this.commands.down()) {
      this.release(hold).then(answered, failed);
      return;
    }
    const [ok, fail] = this.commands.track(
      (reply: unknown) => answered(releaseReply(reply)),
      (error) => failed(redisError(hold.key, 'release', error)),
      RELEASE_RESEND_GRACE,
    );
    const requestId = releaseRequestId(this.requestIdPrefix, hold.owner, 'lock');
    void releasePlain<unknown>(this.client, hold, requestId, ok, fail);
  }

  /** Whether `hold` is released by release.lua alone: a plain lock, no WAIT, classic pub/sub. */
  private plainRelease(hold: StoredHold): boolean {
    return (
      hold.kind === 'lock' && (hold.syncReplicas ?? 0) === 0 && this.notices.shardedKnown === false
    );
  }

  /** A release of any kind, on sharded pub/sub or followed by WAIT (best effort: never undone). */
  private async releaseBy(
    hold: StoredHold,
    requestId: string,
    replicas: number,
  ): Promise<number | null> {
    const kind = KINDS[hold.kind as Exclude<HoldKind, 'multi'>];
    const failed = failure(hold.key, 'release');
    const publish = kind.shardable ? await this.notices.publishCommand().catch(failed) : 'publish';
    const latch = unlockLatchKey(hold.name, requestId);
    const call = kind.release(hold, latch, publish, this.fairPlaceTimeout);
    const [reply] = await this.runCall(call, replicas).catch(failed);
    return kind.released(reply);
  }

  /**
   * Renews every hold given, of every kind, batched per script call and (on a Cluster) per
   * master: see renewHolds. One result per hold: still held, lost, or the LockRedisError of a
   * call that got no answer.
   */
  async renew(holds: readonly StoredHold[], leaseTime: number): Promise<(boolean | Error)[]> {
    const results = await renewHolds(this.client, holds, leaseTime);
    return results.map((result, i) =>
      result instanceof Error ? redisError(holds[i].key, 'renew', result) : result,
    );
  }

  leave(request: AcquireRequest): Promise<void> {
    return this.commands.send(request.key, 'leave', async () => {
      const publish = await this.notices.publishCommand();
      await this.runCall(fairLeave(request, publish), 0);
    });
  }

  forceUnlock(target: LockTarget): Promise<boolean> {
    return this.commands.send(target.key, 'force-unlock', async () => {
      const publish = await this.notices.publishCommand();
      if (target.kind === 'permit') {
        const [revoked] = await this.runCall(permitsForceUnlock(target, publish), 0);
        return Number(revoked) > 0;
      }
      const [reply] = await this.runCall(forceUnlockCall(target, publish), 0);
      return Number(reply) === 1;
    });
  }

  remainingTtl(target: LockTarget): Promise<number | null> {
    return this.commands.send(target.key, 'inspect', async () => {
      const { name, kind } = target;
      if (kind === 'read' || kind === 'write') {
        if ((await this.client.hget(name, 'mode')) !== kind) return null;
      }
      // HLEN first: on a semaphore's string (or another type) it answers WRONGTYPE, as an acquire.
      const replies = (await this.client.pipeline().hlen(name).pttl(name).exec())!;
      const error = replies.find(([refused]) => refused)?.[0];
      if (error) throw error;
      const ttl = Number(replies[1][1]);
      if (ttl === -2) return null;
      return ttl === -1 ? Infinity : ttl;
    });
  }

  available(target: LockTarget): Promise<number> {
    return this.commands.send(target.key, 'inspect', async () => {
      const [reply] = await this.runCall(permitsAvailable(target), 0);
      return Number(reply);
    });
  }

  channel(target: LockTarget, owner: string): string {
    const kind = target.kind === 'multi' ? plainKind : KINDS[target.kind];
    const channel = kind.channel(target, owner);
    if (!kind.shardable) this.notices.classicChannel(channel);
    return channel;
  }

  subscribe(channel: string): Promise<void> {
    return this.notices.subscribe(channel);
  }

  unsubscribe(channel: string): Promise<void> {
    return this.notices.unsubscribe(channel);
  }

  listen(listener: NoticeListener): void {
    this.notices.listen(listener);
  }

  unreachable(): Error | undefined {
    return this.commands.down();
  }

  /** Runs a script call, followed by WAIT when `replicas` > 0 (see runSynced). */
  private runCall(call: ScriptCall, replicas: number): Promise<[unknown, number]> {
    return runSynced(
      this.client,
      call.script,
      replicas,
      this.syncTimeout,
      call.numKeys,
      call.keysAndArgs,
    );
  }

  /** Connects both connections; rejects naming the address and the cause after `timeout` ms. */
  async connect(timeout: number): Promise<void> {
    try {
      await this.connections.connect(timeout);
      await this.notices.sharded();
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
