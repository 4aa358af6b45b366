import {
  UNLOCK_LATCH_TTL,
  type AcquireReply,
  type AcquireRequest,
  type StoredHold,
} from '../../../store';
import { LockScripts } from '../lock-scripts';
import { channelName, fairQueueName, fairTimeoutName, fairTurnName } from '../redis-names';
import type { AcquireInput } from './plain';
import {
  decodeGrantOrWait,
  decodeRelease,
  type KeysAndArgs,
  type PublishCommand,
  type ScriptDefinition,
} from './script-definition';

/** Place timeout when a request names none (the default fairQueueTimeout), ms. */
export const DEFAULT_PLACE_TIMEOUT = 5_000;

/** The keys every fair script takes first: the hash, the queue, the deadlines. */
function queueKeys(out: KeysAndArgs, name: string): void {
  out.push(name, fairQueueName(name), fairTimeoutName(name));
}

/**
 * fair-acquire.lua: KEYS the hash, queue, deadlines, turn; ARGV lease, owner, place timeout,
 * '1' to queue when refused ('0': a single try), the waiters' channel prefix, publish command.
 */
export const FAIR_ACQUIRE: ScriptDefinition<AcquireInput, AcquireReply> = {
  script: LockScripts.fairAcquire,
  layout(out: KeysAndArgs, request: AcquireRequest, publish: PublishCommand): number {
    const { name } = request;
    queueKeys(out, name);
    out.push(fairTurnName(name));
    out.push(
      request.leaseTime,
      request.owner,
      request.placeTimeout ?? DEFAULT_PLACE_TIMEOUT,
      request.queue === false ? '0' : '1',
      channelName(name),
      publish,
    );
    return 4;
  },
  decode: decodeGrantOrWait,
};

/** fair-release.lua's input: a release's, the place timeout, and whether it undoes a grant. */
export type FairReleaseInput = [
  hold: StoredHold,
  latch: string,
  publish: PublishCommand,
  placeTimeout: number,
  requeue: boolean,
];

/**
 * fair-release.lua: KEYS the hash, queue, deadlines, latch, turn; ARGV the waiters' channel
 * prefix, owner, latch lifetime, publish command, place timeout (bounds the deadline of a head
 * nobody listens for), '1' when it undoes the owner's grant (back to the head of the queue).
 */
export const FAIR_RELEASE: ScriptDefinition<FairReleaseInput, number | null> = {
  script: LockScripts.fairRelease,
  layout(
    out: KeysAndArgs,
    hold: StoredHold,
    latch: string,
    publish: PublishCommand,
    placeTimeout: number,
    requeue: boolean,
  ): number {
    const { name } = hold;
    queueKeys(out, name);
    out.push(latch, fairTurnName(name));
    out.push(
      channelName(name),
      hold.owner,
      UNLOCK_LATCH_TTL,
      publish,
      placeTimeout,
      requeue ? '1' : '0',
    );
    return 5;
  },
  decode: decodeRelease,
};

/**
 * fair-leave.lua: KEYS the hash, queue, deadlines, turn; ARGV the waiters' channel prefix,
 * owner, publish command, place timeout.
 */
export const FAIR_LEAVE: ScriptDefinition<AcquireInput, void> = {
  script: LockScripts.fairLeave,
  layout(out: KeysAndArgs, request: AcquireRequest, publish: PublishCommand): number {
    const { name } = request;
    queueKeys(out, name);
    out.push(fairTurnName(name));
    out.push(
      channelName(name),
      request.owner,
      publish,
      request.placeTimeout ?? DEFAULT_PLACE_TIMEOUT,
    );
    return 4;
  },
  decode: () => undefined,
};
