import {
  GRANTED,
  UNLOCK_LATCH_TTL,
  type AcquireReply,
  type AcquireRequest,
  type LockTarget,
  type StoredHold,
} from '../../../store';
import { LockScripts } from '../lock-scripts';
import { permitsName, semaphoreChannelName } from '../redis-names';
import type { AcquireInput, ReleaseInput } from './plain';
import {
  channelKey,
  decodeRelease,
  type KeysAndArgs,
  type PublishCommand,
  type ScriptDefinition,
} from './script-definition';

/** The limit a call on a semaphore uses: its target's `permits`. */
function limit(target: LockTarget): number {
  if (target.permits === undefined) throw new Error(`semaphore "${target.key}" without a limit`);
  return target.permits;
}

/**
 * semaphore-acquire.lua: KEYS the semaphore, its permits zset; ARGV lease, owner (the permit
 * id), limit. >= 0 granted; -1 refused with no lease end known, else ends in -2 - value ms.
 */
export const SEMAPHORE_ACQUIRE: ScriptDefinition<AcquireInput, AcquireReply> = {
  script: LockScripts.semaphoreAcquire,
  layout(out: KeysAndArgs, request: AcquireRequest): number {
    out.push(request.name, permitsName(request.name));
    out.push(request.leaseTime, request.owner, limit(request));
    return 2;
  },
  decode(reply: unknown): AcquireReply {
    const value = Number(reply);
    if (value >= 0) return GRANTED;
    return { granted: false, ttl: value === -1 ? Infinity : -2 - value };
  },
};

/**
 * semaphore-release.lua: KEYS the semaphore, its permits, the latch, the channel (sharded
 * only); ARGV the channel ('' when sharded), owner, latch lifetime, limit, publish command.
 */
export const SEMAPHORE_RELEASE: ScriptDefinition<ReleaseInput, number | null> = {
  script: LockScripts.semaphoreRelease,
  layout(out: KeysAndArgs, hold: StoredHold, latch: string, publish: PublishCommand): number {
    out.push(hold.name, permitsName(hold.name), latch);
    const channel = channelKey(out, semaphoreChannelName(hold.name), publish);
    const numKeys = out.length;
    out.push(channel, hold.owner, UNLOCK_LATCH_TTL, limit(hold), publish);
    return numKeys;
  },
  decode: decodeRelease,
};

/** semaphore-available.lua: KEYS the semaphore, its permits; ARGV limit. The free permits. */
export const SEMAPHORE_AVAILABLE: ScriptDefinition<[target: LockTarget], number> = {
  script: LockScripts.semaphoreAvailable,
  layout(out: KeysAndArgs, target: LockTarget): number {
    out.push(target.name, permitsName(target.name), limit(target));
    return 2;
  },
  decode: Number,
};

/**
 * semaphore-force-unlock.lua: KEYS the semaphore, its permits, the channel (sharded only);
 * ARGV the channel ('' when sharded), limit, publish command. True when a permit was revoked.
 */
export const SEMAPHORE_FORCE_UNLOCK: ScriptDefinition<
  [target: LockTarget, publish: PublishCommand],
  boolean
> = {
  script: LockScripts.semaphoreForceUnlock,
  layout(out: KeysAndArgs, target: LockTarget, publish: PublishCommand): number {
    out.push(target.name, permitsName(target.name));
    const channel = channelKey(out, semaphoreChannelName(target.name), publish);
    const numKeys = out.length;
    out.push(channel, limit(target), publish);
    return numKeys;
  },
  decode: (revoked) => Number(revoked) > 0,
};
