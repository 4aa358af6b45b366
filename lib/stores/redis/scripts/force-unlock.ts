import type { LockTarget } from '../../../store';
import { LockScripts } from '../lock-scripts';
import {
  channelName,
  fairQueueName,
  fairTimeoutName,
  readLeasePrefix,
  rwChannelName,
} from '../redis-names';
import {
  channelKey,
  type KeysAndArgs,
  type PublishCommand,
  type ScriptDefinition,
} from './script-definition';

/**
 * force-unlock.lua on whatever lock lives under `target.name` (plain, fair with its queue, or
 * read-write with its readers' leases): KEYS the hash, the fair queue and deadlines, the plain
 * and the read-write channel (sharded only); ARGV publish command, the two channels ('' when
 * sharded), the readers' lease key prefix, the fair waiters' channel prefix. True when a lock
 * was deleted.
 */
export const FORCE_UNLOCK: ScriptDefinition<
  [target: LockTarget, publish: PublishCommand],
  boolean
> = {
  script: LockScripts.forceUnlock,
  layout(out: KeysAndArgs, target: LockTarget, publish: PublishCommand): number {
    const { name } = target;
    out.push(name, fairQueueName(name), fairTimeoutName(name));
    const plain = channelKey(out, channelName(name), publish);
    const rw = channelKey(out, rwChannelName(name), publish);
    const numKeys = out.length;
    out.push(publish, plain, rw, readLeasePrefix(name), channelName(name));
    return numKeys;
  },
  decode: (reply) => Number(reply) === 1,
};
