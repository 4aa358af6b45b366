import {
  GRANTED,
  UNLOCK_LATCH_TTL,
  type AcquireReply,
  type AcquireRequest,
  type StoredHold,
} from '../../../store';
import { LockScripts } from '../lock-scripts';
import { channelName, tokenKey } from '../redis-names';
import {
  channelKey,
  decodeRelease,
  refusedTtl,
  type KeysAndArgs,
  type PublishCommand,
  type ScriptDefinition,
} from './script-definition';

/** An acquire script's input: the request, and how its scripts publish (fair-acquire.lua's). */
export type AcquireInput = [request: AcquireRequest, publish: PublishCommand];
/** A release script's input: the hold, its unlock latch (the request's), how it publishes. */
export type ReleaseInput = [hold: StoredHold, latch: string, publish: PublishCommand];
/** release-kept.lua's input: the hold, its unlock latch, the ms to keep the lock from now. */
export type KeptReleaseInput = [hold: StoredHold, latch: string, keepFor: number];

/**
 * Decodes acquire.lua's and acquire-fenced.lua's reply: 0 acquired, > 0 acquired with that
 * fencing token; < 0 busy, PTTL -2 - reply.
 */
export function decodeAcquire(reply: unknown): AcquireReply {
  const result = Number(reply);
  if (result === 0) return GRANTED;
  if (result > 0) return { granted: true, fencingToken: result };
  return refusedTtl(result);
}

/** The layout of an acquire whose KEYS are the lock hash alone and ARGV lease, owner. */
export function layoutHashLeaseOwner(out: KeysAndArgs, request: AcquireRequest): number {
  out.push(request.name, request.leaseTime, request.owner);
  return 1;
}

/** acquire.lua: KEYS the lock hash; ARGV lease, owner. */
export const ACQUIRE: ScriptDefinition<AcquireInput, AcquireReply> = {
  script: LockScripts.acquire,
  layout: layoutHashLeaseOwner,
  decode: decodeAcquire,
};

/** acquire-fenced.lua: KEYS the lock hash, its token counter; ARGV lease, owner. */
export const ACQUIRE_FENCED: ScriptDefinition<AcquireInput, AcquireReply> = {
  script: LockScripts.acquireFenced,
  layout(out: KeysAndArgs, request: AcquireRequest): number {
    out.push(request.name, tokenKey(request.name), request.leaseTime, request.owner);
    return 2;
  },
  decode: decodeAcquire,
};

/**
 * release.lua: KEYS the lock hash, the latch, the channel (sharded only); ARGV owner, latch
 * lifetime, publish command, the channel ('' when sharded: see channelKey).
 */
export const RELEASE: ScriptDefinition<ReleaseInput, number | null> = {
  script: LockScripts.release,
  layout(out: KeysAndArgs, hold: StoredHold, latch: string, publish: PublishCommand): number {
    out.push(hold.name, latch);
    const channel = channelKey(out, channelName(hold.name), publish);
    const numKeys = out.length;
    out.push(hold.owner, UNLOCK_LATCH_TTL, publish, channel);
    return numKeys;
  },
  decode: decodeRelease,
};

/**
 * release-kept.lua: KEYS the lock hash, the latch; ARGV owner, latch lifetime (the longer of
 * UNLOCK_LATCH_TTL and the period kept), ms to keep. Decodes to whether the owner held it.
 */
export const RELEASE_KEPT: ScriptDefinition<KeptReleaseInput, boolean> = {
  script: LockScripts.releaseKept,
  layout(out: KeysAndArgs, hold: StoredHold, latch: string, keepFor: number): number {
    out.push(hold.name, latch, hold.owner, Math.max(UNLOCK_LATCH_TTL, keepFor), keepFor);
    return 2;
  },
  decode: (reply: unknown): boolean => reply !== null,
};
