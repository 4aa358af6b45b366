import { randomBytes } from 'node:crypto';
import { ReplicaSyncError } from '../../../errors';
import type { AcquireReply, AcquireRequest, LockTarget, StoredHold } from '../../../store';
import type { RedisClient } from '../client';
import { unlockLatchKey } from '../redis-names';
import { failure } from '../replies';
import { FORCE_UNLOCK } from '../scripts/force-unlock';
import type { RenewEntry } from '../scripts/renew';
import type { PublishCommand, ScriptCall } from '../scripts/script-definition';
import { scriptCall } from '../scripts/script-definition';

/** What a kind needs of the RedisStore it serves. */
export interface KindHost {
  readonly client: RedisClient;
  /** How long WAIT waits for the replicas a synced call asks for, ms. */
  readonly syncTimeout: number;
  /** Runs a script call, synced with `replicas` replicas: its reply and the acknowledgements. */
  run(call: ScriptCall, replicas: number): Promise<[unknown, number]>;
  /** How the scripts publish: sharded or classic (decided once, at the first need). */
  publish(): Promise<PublishCommand>;
  /** Whether notices are known to be classic (the fast path's release publishes so). */
  classicKnown(): boolean;
  /** The id of a release request of `owner` for a kind whose digit is `digit`. */
  requestId(owner: string, digit: string): string;
  /** Frees a hold (the store's release: idempotent, resent after a reconnect). */
  release(hold: StoredHold): Promise<number | null>;
}

/**
 * The store's fast path for a kind (FastPathPort): its acquire and release as one script call
 * each, unsynced and on classic pub/sub, the raw reply handed to `onReply` in the step that
 * reads it (decoded then by decodeAcquire/decodeRelease), no promise or array of its own.
 */
export interface DirectCalls {
  acquireNow<T>(
    request: AcquireRequest,
    onReply: (reply: unknown) => T,
    onError: (error: unknown) => T,
  ): Promise<T>;
  decodeAcquire(reply: unknown): AcquireReply;
  /** A release with classic PUBLISH; `requestId` names its unlock latch. */
  releaseNow<T>(
    hold: StoredHold,
    requestId: string,
    onReply: (reply: unknown) => T,
    onError: (error: unknown) => T,
  ): Promise<T>;
  decodeRelease(reply: unknown): number | null;
}

/**
 * One kind of hold in Redis (Redisson's layout for it): its acquire and release (synced with
 * replicas when asked), renewal entries, force unlock, lease query and channel. One per kind
 * and store (kinds/index.ts); the store dispatches by the kind's id and never names a kind.
 */
export interface RedisKind {
  /** Whether its notices may go over sharded pub/sub (its scripts can SPUBLISH). */
  readonly shardable: boolean;
  /** Its digit in release request ids: a downgraded owner's read and write releases differ. */
  readonly requestDigit: string;
  /**
   * Whether a grant answered after its caller was told the request failed is freed at once:
   * false when the owner id may be in use again (a fair waiter's, a downgrade's), whose next
   * attempt answers for it (HoldCalls knows).
   */
  readonly freeLateGrant: boolean;
  /** Its fast path, when it has one. */
  readonly direct: DirectCalls | undefined;
  /** Takes the target; a grant fewer than `replicas` replicas acknowledged is undone. */
  acquire(request: AcquireRequest, replicas: number): Promise<AcquireReply>;
  /** Frees the hold (release request `requestId`): listeners told, or null when not held. */
  release(hold: StoredHold, requestId: string, replicas: number): Promise<number | null>;
  /** The renew scripts' entries of `hold` (the `index`-th hold of the batch), onto `out`. */
  renewEntries(hold: StoredHold, index: number, out: RenewEntry[]): void;
  /** Frees the target whoever holds it and tells its waiters; true when it was held. */
  forceUnlock(target: LockTarget): Promise<boolean>;
  /** See LockStore.remainingTtl. */
  remainingTtl(target: LockTarget): Promise<number | null>;
  /** The channel a waiter `owner` for `target` listens on. */
  channel(target: LockTarget, owner: string): string;
  /** FairQueuePort: a waiter that gives up leaves the queue. */
  leave?(request: AcquireRequest): Promise<void>;
  /** PermitCountPort: the permits a caller with the target's limit could take. */
  available?(target: LockTarget): Promise<number>;
  /** KeptReleasePort (release request `requestId`): whether the owner held it. */
  releaseKept?(
    hold: StoredHold,
    requestId: string,
    keepFor: number,
    replicas: number,
  ): Promise<boolean>;
}

/**
 * A kind made of one acquire and one release script (every kind but the multi-lock): runs them
 * synced as asked, undoes a grant too few replicas acknowledged (by a release, unless the kind
 * says otherwise), and by default lives under its name as a lock (force-unlock.lua, the hash's
 * PTTL) with one renew entry per hold.
 */
export abstract class ScriptKind implements RedisKind {
  readonly shardable: boolean = true;
  readonly freeLateGrant: boolean = true;
  readonly direct: DirectCalls | undefined = undefined;
  abstract readonly requestDigit: string;

  constructor(protected readonly host: KindHost) {}

  /** The acquire script's call. */
  protected abstract acquireCall(
    request: AcquireRequest,
    publish: PublishCommand,
  ): ScriptCall<AcquireReply>;

  /** The release script's call (`latch`: this release request's unlock latch). */
  protected abstract releaseCall(
    hold: StoredHold,
    latch: string,
    publish: PublishCommand,
  ): ScriptCall<number | null>;

  abstract channel(target: LockTarget, owner: string): string;

  /** Its renew entry: the hash with the owner's field ('l'). */
  renewEntries(hold: StoredHold, index: number, out: RenewEntry[]): void {
    out.push({ letter: 'l', keys: [hold.name], owner: hold.owner, hold: index });
  }

  async acquire(request: AcquireRequest, replicas: number): Promise<AcquireReply> {
    const failed = failure(request.key, 'acquire');
    const publish = await this.publish().catch(failed);
    const call = this.acquireCall(request, publish);
    const [reply, acknowledged] = await this.host.run(call, replicas).catch(failed);
    const result = call.decode(reply);
    if (result.granted && acknowledged < replicas) {
      await this.undo(request, publish).catch(() => undefined);
      throw new ReplicaSyncError(request.key, acknowledged, replicas, this.host.syncTimeout);
    }
    return result;
  }

  /** Undoes a grant too few replicas acknowledged: released (the caller may try again). */
  protected undo(request: AcquireRequest, _publish: PublishCommand): Promise<unknown> {
    return this.host.release({ ...request, syncReplicas: 0 });
  }

  /** A release, on sharded pub/sub or followed by WAIT (best effort: never undone). */
  async release(hold: StoredHold, requestId: string, replicas: number): Promise<number | null> {
    const failed = failure(hold.key, 'release');
    const publish = await this.publish().catch(failed);
    const call = this.releaseCall(hold, unlockLatchKey(hold.name, requestId), publish);
    const [reply] = await this.host.run(call, replicas).catch(failed);
    return call.decode(reply);
  }

  forceUnlock(target: LockTarget): Promise<boolean> {
    return forceUnlockLock(this.host, target);
  }

  remainingTtl(target: LockTarget): Promise<number | null> {
    return hashTtl(this.host.client, target.name);
  }

  /** How its scripts publish. */
  protected publish(): Promise<PublishCommand> {
    return this.shardable ? this.host.publish() : Promise.resolve('publish');
  }
}

/** A fresh unlock latch of `name`, for a call no later release of the owner must read. */
export function oneOffLatch(name: string): string {
  return unlockLatchKey(name, randomBytes(16).toString('hex'));
}

/**
 * force-unlock.lua on whatever lock lives under `target.name`: a plain or fair lock (and its
 * queue) or a read-write lock (its readers' leases too), its waiters told on each kind's channel.
 */
export async function forceUnlockLock(host: KindHost, target: LockTarget): Promise<boolean> {
  const publish = await host.publish();
  const call = scriptCall(FORCE_UNLOCK, target, publish);
  const [reply] = await host.run(call, 0);
  return call.decode(reply);
}

/**
 * The remaining lease of the hash `name`: null when there is none, Infinity without a lease.
 * HLEN first: on a semaphore's string (or another type) it answers WRONGTYPE, as an acquire.
 */
export async function hashTtl(client: RedisClient, name: string): Promise<number | null> {
  const replies = await client.pipeline([
    ['hlen', name],
    ['pttl', name],
  ]);
  const error = replies.find(([refused]) => refused)?.[0];
  if (error) throw error;
  const ttl = Number(replies[1][1]);
  if (ttl === -2) return null;
  return ttl === -1 ? Infinity : ttl;
}
