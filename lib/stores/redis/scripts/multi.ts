import { UNLOCK_LATCH_TTL } from '../../../store';
import { LockScripts } from '../lock-scripts';
import { channelName } from '../redis-names';
import type { KeysAndArgs, PublishCommand, ScriptDefinition } from './script-definition';

/** A multi-acquire refused: the busy member (its index in the call's keys) and its lease, ms. */
export interface BusyMember {
  readonly member: number;
  readonly ttl: number;
}

/**
 * multi-acquire.lua: KEYS the members' hashes; ARGV lease, owner. Every member taken (null), or
 * the first busy one: -1 - (ttl + 1) * 1000 - index.
 */
export const MULTI_ACQUIRE: ScriptDefinition<
  [members: readonly string[], leaseTime: number, owner: string],
  BusyMember | null
> = {
  script: LockScripts.multiAcquire,
  layout(out: KeysAndArgs, members: readonly string[], leaseTime: number, owner: string): number {
    out.push(...members, leaseTime, owner);
    return members.length;
  },
  decode(reply: unknown): BusyMember | null {
    const value = Number(reply);
    if (value >= 0) return null;
    const x = -1 - value;
    const ttl = Math.floor(x / 1000) - 1;
    return { member: x % 1000, ttl: ttl === -1 ? Infinity : ttl };
  },
};

/**
 * multi-release.lua: KEYS the members' hashes, the latch (named after the first member, in
 * their slot); ARGV owner, latch lifetime, each member's channel, publish command. The most
 * listeners told for a member, or null when any member was not held.
 */
export const MULTI_RELEASE: ScriptDefinition<
  [members: readonly string[], latch: string, owner: string, publish: PublishCommand],
  number | null
> = {
  script: LockScripts.multiRelease,
  layout(
    out: KeysAndArgs,
    members: readonly string[],
    latch: string,
    owner: string,
    publish: PublishCommand,
  ): number {
    out.push(...members, latch, owner, UNLOCK_LATCH_TTL, ...members.map(channelName), publish);
    return members.length + 1;
  },
  decode(reply: unknown): number | null {
    let listeners = 0;
    for (const member of reply as (number | null)[]) {
      if (member === null) return null;
      listeners = Math.max(listeners, Number(member));
    }
    return listeners;
  },
};
