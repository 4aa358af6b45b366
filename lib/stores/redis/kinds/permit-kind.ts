import {
  UNLOCK_LATCH_TTL,
  type AcquireRequest,
  type LockTarget,
  type StoredHold,
} from '../../../store';
import { LockScripts } from '../lock-scripts';
import { permitsName, semaphoreChannelName } from '../redis-names';
import {
  callWithChannel,
  listenersOrNull,
  type PublishCommand,
  type RedisKind,
  type ScriptCall,
} from './redis-kind';

const GRANTED_SHARED = { granted: true, fencingToken: undefined, shared: true } as const;

/** Leased permits of a semaphore (Redisson's RPermitExpirableSemaphore layout). */
export const permitKind: RedisKind = {
  shardable: true,
  acquire: (request: AcquireRequest) => ({
    script: LockScripts.semaphoreAcquire,
    numKeys: 2,
    keysAndArgs: [
      request.name,
      permitsName(request.name),
      request.leaseTime,
      request.owner,
      limit(request),
    ],
  }),
  acquired: (reply) => {
    const value = Number(reply);
    // Shared: the next waiter tries at once and learns its own wait (its limit may differ).
    if (value >= 0) return GRANTED_SHARED;
    return { granted: false, ttl: value === -1 ? Infinity : -2 - value };
  },
  release: (hold: StoredHold, latch: string, publish) =>
    callWithChannel(
      LockScripts.semaphoreRelease,
      [hold.name, permitsName(hold.name), latch],
      semaphoreChannelName(hold.name),
      publish,
      [hold.owner, UNLOCK_LATCH_TTL, limit(hold), publish],
    ),
  released: listenersOrNull,
  channel: (target) => semaphoreChannelName(target.name),
};

/** Counts the permits a caller with the target's limit could take. */
export function permitsAvailable(target: LockTarget): ScriptCall {
  return {
    script: LockScripts.semaphoreAvailable,
    numKeys: 2,
    keysAndArgs: [target.name, permitsName(target.name), limit(target)],
  };
}

/** Revokes every permit of the semaphore. */
export function permitsForceUnlock(target: LockTarget, publish: PublishCommand): ScriptCall {
  return callWithChannel(
    LockScripts.semaphoreForceUnlock,
    [target.name, permitsName(target.name)],
    semaphoreChannelName(target.name),
    publish,
    [limit(target), publish],
  );
}

function limit(target: LockTarget): number {
  if (target.permits === undefined) throw new Error(`semaphore "${target.key}" without a limit`);
  return target.permits;
}
