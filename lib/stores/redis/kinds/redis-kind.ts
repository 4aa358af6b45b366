import type { AcquireReply, AcquireRequest, LockTarget, StoredHold } from '../../../store';
import type { LuaScript } from '../lua-script';

/** How a release is announced: sharded pub/sub (a Cluster of Redis >= 7) or classic. */
export type PublishCommand = 'spublish' | 'publish';

/** One script call: the script, its key count, then keys and arguments as EVALSHA takes them. */
export interface ScriptCall {
  readonly script: LuaScript;
  readonly numKeys: number;
  readonly keysAndArgs: (string | number)[];
}

/**
 * One kind of hold in Redis (Redisson's layout for it): the script calls that acquire and
 * release it and how their replies read. A new primitive is a new set of scripts and one of
 * these; the store runs the calls (synced with replicas when asked) and batches renewals.
 */
export interface RedisKind {
  /** Whether its notices may go over sharded pub/sub (its scripts can SPUBLISH). */
  readonly shardable: boolean;
  /** `publish`: how a script that tells a waiter (fair-acquire.lua) publishes. */
  acquire(request: AcquireRequest, publish: PublishCommand): ScriptCall;
  acquired(reply: unknown, request: AcquireRequest): AcquireReply;
  /**
   * `latch`: the unlock latch key of this release request; `placeTimeout`: the fair waiters'
   * (fairQueueTimeout), for the fair kind's release.
   */
  release(
    hold: StoredHold,
    latch: string,
    publish: PublishCommand,
    placeTimeout: number,
  ): ScriptCall;
  /** Listeners told, or null when the owner did not hold it. */
  released(reply: unknown): number | null;
  /** The channel a waiter for `target` listens on. */
  channel(target: LockTarget, owner: string): string;
}

/**
 * A channel known in advance, as the scripts take it (see release.lua): with SPUBLISH, declared
 * as a key (it must lie in the script's slot) and '' in its argument's place; with PUBLISH, an
 * argument only (ACL key patterns then need not cover it).
 */
export function channelSlots(
  channel: string,
  publish: PublishCommand,
): { keys: string[]; arg: string } {
  return publish === 'spublish' ? { keys: [channel], arg: '' } : { keys: [], arg: channel };
}

/**
 * A script call whose channel is known in advance (see channelSlots): `keys`, the channel's key
 * when it is one, then the channel argument and `args`.
 */
export function callWithChannel(
  script: LuaScript,
  keys: string[],
  channel: string,
  publish: PublishCommand,
  args: (string | number)[],
): ScriptCall {
  const slots = channelSlots(channel, publish);
  return {
    script,
    numKeys: keys.length + slots.keys.length,
    keysAndArgs: [...keys, ...slots.keys, slots.arg, ...args],
  };
}

/** Decodes the `-2 - pttl` refusal most acquire scripts return: the holder's lease, ms. */
export function refusedTtl(reply: number): AcquireReply {
  return { granted: false, ttl: reply === -1 ? Infinity : -2 - reply };
}

/** Decodes a release reply: listeners told, or null (not held). */
export function listenersOrNull(reply: unknown): number | null {
  return reply === null ? null : Math.max(0, Number(reply));
}
