import { randomBytes } from 'node:crypto';
import { LockError } from '../../errors';
import {
  unsupportedError,
  type AcquireReply,
  type AcquireRequest,
  type ClientInfo,
  type ClientRegistryPort,
  type FairQueuePort,
  type FastPathPort,
  type HoldKind,
  type KeptReleasePort,
  type LockStore,
  type LockTarget,
  type NoticeListener,
  type PermitCountPort,
  type StoredHold,
  type TurnPassPort,
} from '../../store';
import { ClientRegistration, holderOfNames } from './client-registry';
import { redisKinds, type RedisKind } from './kinds';
import type { RedisClient, RedisConnections } from './client';
import { redisError } from './replies';
import { runSynced } from './replica-sync';
import type { ConnectionState } from './connection-state';
import { RedisNotices } from './notices';
import { renewHolds } from './renewal';
import { releaseRequestId } from './redis-names';
import type { RenewEntry } from './scripts/renew';
import type { ScriptCall } from './scripts/script-definition';

/** How long a release sent before its connection broke waits for its resent answer, ms. */
const RELEASE_RESEND_GRACE = 500;
/**
 * The lock store on one Redis server, a Sentinel-managed primary or a Redis Cluster: Redisson's
 * layout for each kind of hold (kinds/), one Lua script per state change (all keys of a script
 * in one slot), messages over pub/sub on Redisson's channels: sharded (SPUBLISH/SSUBSCRIBE) for
 * every kind on a Cluster of Redis >= 7 when the client can follow sharded channels, as Redisson;
 * classic otherwise.
 */
export class RedisStore
  implements
    LockStore,
    FairQueuePort,
    PermitCountPort,
    FastPathPort,
    KeptReleasePort,
    ClientRegistryPort,
    TurnPassPort
{
  /** The random half of every release request id (the other half is the owner's number). */
  private readonly requestIdPrefix = randomBytes(8).toString('hex');
  private readonly client: RedisClient;
  private readonly commands: ConnectionState;
  private readonly notices: RedisNotices;
  /** The Redis side of each kind of hold (kinds/), by id. */
  private readonly kinds: { readonly [K in HoldKind]: RedisKind };
  private readonly registration: ClientRegistration;

  constructor(
    private readonly connections: RedisConnections,
    /** How long WAIT waits for the replicas a synced acquire or release asks for, ms. */
    private readonly syncTimeout = 1_000,
  ) {
    this.client = connections.client;
    this.commands = connections.commands;
    this.notices = new RedisNotices(connections);
    this.registration = new ClientRegistration(this.client);
    this.kinds = redisKinds({
      client: this.client,
      syncTimeout,
      run: (call, replicas) => this.runCall(call, replicas),
      publish: () => this.notices.publishCommand(),
      classicKnown: () => this.notices.shardedKnown === false,
      requestId: (owner, digit) => releaseRequestId(this.requestIdPrefix, owner, digit),
      release: (hold) => this.release(hold),
    });
  }

  acquire(request: AcquireRequest): Promise<AcquireReply> {
    const kind = this.kinds[request.kind];
    const acquire = () => kind.acquire(request, request.syncReplicas ?? 0);
    return this.commands.send(request.key, 'acquire', acquire, 0, (reply) =>
      this.late(kind, request, reply),
    );
  }

  /**
   * Frees a grant answered after its caller was told the request failed (connection closed),
   * unless the owner id may be in use again (a fair waiter's, a downgrade's): HoldCalls knows.
   */
  private late(kind: RedisKind, request: AcquireRequest, reply: AcquireReply): void {
    if (!reply.granted || !kind.freeLateGrant) return;
    void this.release({ ...request, syncReplicas: 0 }).catch(() => undefined);
  }

  acquireInto(
    request: AcquireRequest,
    answered: (reply: AcquireReply) => void,
    failed: (error: unknown) => void,
  ): void {
    const kind = this.kinds[request.kind];
    const direct = kind.direct;
    if (direct === undefined || (request.syncReplicas ?? 0) > 0 || this.commands.down()) {
      this.acquire(request).then(answered, failed);
      return;
    }
    const [ok, fail] = this.commands.track(answered, (error) =>
      failed(redisError(request.key, 'acquire', error)),
    );
    const read = (reply: unknown) => {
      const result = direct.decodeAcquire(reply);
      if (!ok(result)) this.late(kind, request, result);
    };
    void direct.acquireNow(request, read, fail);
  }

  /** Unsent while down; resent after a reconnect (the unlock latch answers it again). */
  release(hold: StoredHold): Promise<number | null> {
    const kind = this.kinds[hold.kind];
    const release = () => {
      const requestId = releaseRequestId(this.requestIdPrefix, hold.owner, kind.requestDigit);
      return kind.release(hold, requestId, hold.syncReplicas ?? 0);
    };
    return this.commands.send(hold.key, 'release', release, RELEASE_RESEND_GRACE);
  }

  releaseInto(
    hold: StoredHold,
    answered: (listeners: number | null) => void,
    failed: (error: unknown) => void,
  ): void {
    const kind = this.kinds[hold.kind];
    const direct = kind.direct;
    // The fast path: unsynced, on classic pub/sub (its release publishes so).
    if (
      direct === undefined ||
      (hold.syncReplicas ?? 0) > 0 ||
      this.notices.shardedKnown !== false ||
      this.commands.down()
    ) {
      this.release(hold).then(answered, failed);
      return;
    }
    const [ok, fail] = this.commands.track(
      (reply: unknown) => answered(direct.decodeRelease(reply)),
      (error) => failed(redisError(hold.key, 'release', error)),
      RELEASE_RESEND_GRACE,
    );
    const requestId = releaseRequestId(this.requestIdPrefix, hold.owner, kind.requestDigit);
    void direct.releaseNow<unknown>(hold, requestId, ok, fail);
  }

  /**
   * Renews every hold given, of every kind, batched per script call and (on a Cluster) per
   * master: see renewHolds. One result per hold: still held, lost, or the LockRedisError of a
   * call that got no answer.
   */
  async renew(holds: readonly StoredHold[], leaseTime: number): Promise<(boolean | Error)[]> {
    const entries: RenewEntry[] = [];
    holds.forEach((hold, index) => this.kinds[hold.kind].renewEntries(hold, index, entries));
    const results = await renewHolds(this.client, holds.length, entries, leaseTime);
    return results.map((result, i) =>
      result instanceof Error ? redisError(holds[i].key, 'renew', result) : result,
    );
  }

  /** KeptReleasePort: by the kind that keeps (plain locks); resent after a reconnect, as release. */
  releaseKept(hold: StoredHold, keepFor: number): Promise<boolean> {
    const kind = this.kinds[hold.kind];
    const release = () => {
      const requestId = releaseRequestId(this.requestIdPrefix, hold.owner, kind.requestDigit);
      return (
        kind.releaseKept?.(hold, requestId, keepFor, hold.syncReplicas ?? 0) ??
        Promise.reject(unsupportedError(hold, 'releaseKept'))
      );
    };
    return this.commands.send(hold.key, 'release', release, RELEASE_RESEND_GRACE);
  }

  /** FairQueuePort: by the kind that has a queue. */
  leave(request: AcquireRequest): Promise<void> {
    const kind = this.kinds[request.kind];
    return this.commands.send(
      request.key,
      'leave',
      () => kind.leave?.(request) ?? Promise.reject(unsupportedError(request, 'leave')),
    );
  }

  forceUnlock(target: LockTarget): Promise<boolean> {
    const kind = this.kinds[target.kind];
    return this.commands.send(target.key, 'force-unlock', () => kind.forceUnlock(target));
  }

  remainingTtl(target: LockTarget): Promise<number | null> {
    const kind = this.kinds[target.kind];
    return this.commands.send(target.key, 'inspect', () => kind.remainingTtl(target));
  }

  /** PermitCountPort: by the kind that counts permits. */
  available(target: LockTarget): Promise<number> {
    const kind = this.kinds[target.kind];
    return this.commands.send(
      target.key,
      'inspect',
      () => kind.available?.(target) ?? Promise.reject(unsupportedError(target, 'available')),
    );
  }

  channel(target: LockTarget, owner: string): string {
    const kind = this.kinds[target.kind];
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

  /** TurnPassPort: Redisson's unlock message on the channel, as a release publishes it. */
  passTurn(channel: string): Promise<void> {
    return this.commands.send(channel, 'pass-turn', () => this.notices.announce(channel));
  }

  unreachable(): Error | undefined {
    return this.commands.down();
  }

  reachable(): Promise<void> {
    return this.commands.reachable();
  }

  /** ClientRegistryPort: a record under `redisson_lock_client:{<id>}` (see client-registry.ts). */
  registerClient(info: ClientInfo, ttl: number): void {
    this.registration.start(info, ttl);
  }

  unregisterClient(): Promise<void> {
    return this.registration.stop();
  }

  holderOf(target: LockTarget): Promise<ClientInfo | undefined> {
    return holderOfNames(this.client, target.names ?? [target.name]);
  }

  /** The command client (the inspector reads Redis through it). */
  get redisClient(): RedisClient {
    return this.client;
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

  /** Stops the client registration's timer and closes the connections the store opened. */
  close(): Promise<void> {
    void this.registration.stop().catch(() => undefined);
    return this.connections.close();
  }
}
