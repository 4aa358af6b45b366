import type { AcquireRequest, StoredHold } from '../../store/lock-store';
import { LockScripts } from '../lock-scripts';
import { channelName, fairQueueName, fairTimeoutName, fairWaiterChannel } from '../redis-names';
import {
  type PublishCommand,
  listenersOrNull,
  refusedTtl,
  type RedisKind,
  type ScriptCall,
  UNLOCK_LATCH_TTL,
} from './redis-kind';

const GRANTED = { granted: true, fencingToken: undefined } as const;
/** Place timeout when a request names none, ms. */
const DEFAULT_PLACE_TIMEOUT = 5_000;

/**
 * Fair locks (Redisson's RFairLock): the plain lock's hash, granted in the order of a queue in
 * Redis; a release tells only the queue's head, on its own channel.
 */
export const fairKind: RedisKind = {
  shardable: true,
  acquire: (request: AcquireRequest, publish) => ({
    script: LockScripts.fairAcquire,
    numKeys: 3,
    keysAndArgs: [
      request.name,
      fairQueueName(request.name),
      fairTimeoutName(request.name),
      request.leaseTime,
      request.owner,
      request.placeTimeout ?? DEFAULT_PLACE_TIMEOUT,
      request.queue === false ? '0' : '1',
      channelName(request.name),
      publish,
    ],
  }),
  acquired: (reply) => (Number(reply) === 0 ? GRANTED : refusedTtl(Number(reply))),
  release: (hold: StoredHold, latch: string, publish) => ({
    script: LockScripts.fairRelease,
    numKeys: 4,
    keysAndArgs: [
      hold.name,
      fairQueueName(hold.name),
      fairTimeoutName(hold.name),
      latch,
      channelName(hold.name),
      hold.owner,
      UNLOCK_LATCH_TTL,
      publish,
    ],
  }),
  released: listenersOrNull,
  channel: (target, owner) => fairWaiterChannel(target.name, owner),
};

/** A fair waiter leaves the queue (fair-leave.lua). */
export function fairLeave(request: AcquireRequest, publish: PublishCommand): ScriptCall {
  return {
    script: LockScripts.fairLeave,
    numKeys: 3,
    keysAndArgs: [
      request.name,
      fairQueueName(request.name),
      fairTimeoutName(request.name),
      channelName(request.name),
      request.owner,
      publish,
    ],
  };
}
