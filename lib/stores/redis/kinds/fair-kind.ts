import { randomBytes } from 'node:crypto';
import { UNLOCK_LATCH_TTL, type AcquireRequest, type StoredHold } from '../../../store';
import { LockScripts } from '../lock-scripts';
import {
  channelName,
  fairQueueName,
  fairTimeoutName,
  fairTurnName,
  fairWaiterChannel,
  unlockLatchKey,
} from '../redis-names';
import {
  type PublishCommand,
  listenersOrNull,
  refusedTtl,
  type RedisKind,
  type ScriptCall,
} from './redis-kind';

const GRANTED = { granted: true, fencingToken: undefined } as const;
/** Place timeout when a request names none (the default fairQueueTimeout), ms. */
export const DEFAULT_PLACE_TIMEOUT = 5_000;

/**
 * Fair locks (Redisson's RFairLock): the plain lock's hash, granted in the order of a queue in
 * Redis; a release tells only the queue's head, on its own channel (with nobody queued, the
 * plain lock's channel).
 */
export const fairKind: RedisKind = {
  shardable: true,
  acquire: (request: AcquireRequest, publish) => ({
    script: LockScripts.fairAcquire,
    numKeys: 4,
    keysAndArgs: [
      request.name,
      fairQueueName(request.name),
      fairTimeoutName(request.name),
      fairTurnName(request.name),
      request.leaseTime,
      request.owner,
      request.placeTimeout ?? DEFAULT_PLACE_TIMEOUT,
      request.queue === false ? '0' : '1',
      channelName(request.name),
      publish,
    ],
  }),
  acquired: (reply) => (Number(reply) === 0 ? GRANTED : refusedTtl(Number(reply))),
  release: (hold, latch, publish, placeTimeout) => fairRelease(hold, latch, publish, placeTimeout),
  released: listenersOrNull,
  channel: (target, owner) => fairWaiterChannel(target.name, owner),
};

/**
 * A fair release (fair-release.lua): `placeTimeout` bounds the deadline of a head nobody listens
 * for; `requeue` undoes the owner's grant, putting it back at the head of the queue.
 */
export function fairRelease(
  hold: StoredHold,
  latch: string,
  publish: PublishCommand,
  placeTimeout: number,
  requeue = false,
): ScriptCall {
  return {
    script: LockScripts.fairRelease,
    numKeys: 5,
    keysAndArgs: [
      hold.name,
      fairQueueName(hold.name),
      fairTimeoutName(hold.name),
      latch,
      fairTurnName(hold.name),
      channelName(hold.name),
      hold.owner,
      UNLOCK_LATCH_TTL,
      publish,
      placeTimeout,
      requeue ? '1' : '0',
    ],
  };
}

/**
 * Undoes a fair grant too few replicas acknowledged (fair-release.lua): a waiter goes back to
 * the head of its queue. Its own latch, so no later release of the owner reads this answer.
 */
export function fairUndo(
  request: AcquireRequest,
  publish: PublishCommand,
  placeTimeout: number,
): ScriptCall {
  const latch = unlockLatchKey(request.name, randomBytes(16).toString('hex'));
  return fairRelease(request, latch, publish, placeTimeout, request.queue !== false);
}

/** A fair waiter leaves the queue (fair-leave.lua). */
export function fairLeave(request: AcquireRequest, publish: PublishCommand): ScriptCall {
  return {
    script: LockScripts.fairLeave,
    numKeys: 4,
    keysAndArgs: [
      request.name,
      fairQueueName(request.name),
      fairTimeoutName(request.name),
      fairTurnName(request.name),
      channelName(request.name),
      request.owner,
      publish,
      request.placeTimeout ?? DEFAULT_PLACE_TIMEOUT,
    ],
  };
}
