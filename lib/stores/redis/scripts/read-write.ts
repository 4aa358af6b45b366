import {
  UNLOCK_LATCH_TTL,
  type AcquireReply,
  type AcquireRequest,
  type StoredHold,
} from '../../../store';
import { LockScripts } from '../lock-scripts';
import { readLeaseKey, readLeasePrefix, rwChannelName } from '../redis-names';
import { layoutHashLeaseOwner, type AcquireInput, type ReleaseInput } from './plain';
import {
  channelKey,
  decodeGrantOrWait,
  decodeRelease,
  type KeysAndArgs,
  type PublishCommand,
  type ScriptDefinition,
} from './script-definition';

/** read-acquire.lua: KEYS the hash, this hold's lease key; ARGV lease, owner. */
export const READ_ACQUIRE: ScriptDefinition<AcquireInput, AcquireReply> = {
  script: LockScripts.readAcquire,
  layout(out: KeysAndArgs, request: AcquireRequest): number {
    out.push(request.name, readLeaseKey(request.name, request.owner));
    out.push(request.leaseTime, request.owner);
    return 2;
  },
  decode: decodeGrantOrWait,
};

/**
 * read-release.lua: KEYS the hash, this hold's lease key, the latch, the channel (sharded
 * only); ARGV the channel ('' when sharded), owner, latch lifetime, the readers' lease key
 * prefix, publish command. -1 (the lock stays held by others): nobody was told.
 */
export const READ_RELEASE: ScriptDefinition<ReleaseInput, number | null> = {
  script: LockScripts.readRelease,
  layout(out: KeysAndArgs, hold: StoredHold, latch: string, publish: PublishCommand): number {
    const { name, owner } = hold;
    out.push(name, readLeaseKey(name, owner), latch);
    const channel = channelKey(out, rwChannelName(name), publish);
    const numKeys = out.length;
    out.push(channel, owner, UNLOCK_LATCH_TTL, readLeasePrefix(name), publish);
    return numKeys;
  },
  decode: decodeRelease,
};

/** write-acquire.lua: KEYS the hash; ARGV lease, owner. */
export const WRITE_ACQUIRE: ScriptDefinition<AcquireInput, AcquireReply> = {
  script: LockScripts.writeAcquire,
  layout: layoutHashLeaseOwner,
  decode: decodeGrantOrWait,
};

/**
 * write-release.lua: KEYS the hash, the latch, the channel (sharded only); ARGV the channel
 * ('' when sharded), owner, latch lifetime, publish command.
 */
export const WRITE_RELEASE: ScriptDefinition<ReleaseInput, number | null> = {
  script: LockScripts.writeRelease,
  layout(out: KeysAndArgs, hold: StoredHold, latch: string, publish: PublishCommand): number {
    out.push(hold.name, latch);
    const channel = channelKey(out, rwChannelName(hold.name), publish);
    const numKeys = out.length;
    out.push(channel, hold.owner, UNLOCK_LATCH_TTL, publish);
    return numKeys;
  },
  decode: decodeRelease,
};
