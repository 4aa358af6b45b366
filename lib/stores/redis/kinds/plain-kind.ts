import { UNLOCK_LATCH_TTL, type AcquireRequest, type StoredHold } from '../../../store';
import type { ScriptClient } from '../lua-script';
import { LockScripts } from '../lock-scripts';
import { acquireReply, releaseReply } from '../replies';
import { channelName, tokenKey, unlockLatchKey } from '../redis-names';
import type { RedisKind } from './redis-kind';

/** Plain reentrant locks (Redisson's RLock; with fencing, RFencedLock). */
export const plainKind: RedisKind = {
  shardable: true,
  acquire: (request: AcquireRequest) =>
    request.fencing
      ? {
          script: LockScripts.acquireFenced,
          numKeys: 2,
          keysAndArgs: [request.name, tokenKey(request.name), request.leaseTime, request.owner],
        }
      : {
          script: LockScripts.acquire,
          numKeys: 1,
          keysAndArgs: [request.name, request.leaseTime, request.owner],
        },
  acquired: acquireReply,
  release: (hold: StoredHold, latch: string, publish) => {
    // The channel is a key only for SPUBLISH (see release.lua).
    const channel = channelName(hold.name);
    const sharded = publish === 'spublish';
    return {
      script: LockScripts.release,
      numKeys: sharded ? 3 : 2,
      keysAndArgs: sharded
        ? [hold.name, latch, channel, hold.owner, UNLOCK_LATCH_TTL, publish]
        : [hold.name, latch, hold.owner, UNLOCK_LATCH_TTL, publish, channel],
    };
  },
  released: releaseReply,
  channel: (target) => channelName(target.name),
};

/**
 * A plain lock's acquire as one script call with its arguments spelled out (no ScriptCall built):
 * the path every lock call takes. `onReply` and `onError` run in the step that reads the answer.
 */
export function acquirePlain<T>(
  client: ScriptClient,
  request: AcquireRequest,
  onReply: (reply: unknown) => T,
  onError: (error: unknown) => T,
): Promise<T> {
  const { name, owner, leaseTime } = request;
  if (!request.fencing) {
    return LockScripts.acquire.call(client, onReply, onError, 1, name, leaseTime, owner);
  }
  return LockScripts.acquireFenced.call(
    client,
    onReply,
    onError,
    2,
    name,
    tokenKey(name),
    leaseTime,
    owner,
  );
}

/**
 * A plain lock's release with classic PUBLISH, as acquirePlain() is its acquire (`requestId`:
 * the release request's id, which names its unlock latch).
 */
export function releasePlain<T>(
  client: ScriptClient,
  hold: StoredHold,
  requestId: string,
  onReply: (reply: unknown) => T,
  onError: (error: unknown) => T,
): Promise<T> {
  const { name, owner } = hold;
  return LockScripts.release.call(
    client,
    onReply,
    onError,
    2,
    name,
    unlockLatchKey(name, requestId),
    owner,
    UNLOCK_LATCH_TTL,
    'publish',
    channelName(name),
  );
}
