import type { LockTarget } from '../../../store';
import { LockScripts } from '../lock-scripts';
import {
  channelName,
  fairQueueName,
  fairTimeoutName,
  readLeasePrefix,
  rwChannelName,
} from '../redis-names';
import { channelSlots, type PublishCommand, type ScriptCall } from './redis-kind';

/**
 * force-unlock.lua on whatever lives under `target.name`: a plain or fair lock (and its queue)
 * or a read-write lock (its readers' leases too), its waiters told on each kind's channel.
 */
export function forceUnlockCall(target: LockTarget, publish: PublishCommand): ScriptCall {
  const { name } = target;
  const plain = channelSlots(channelName(name), publish);
  const rw = channelSlots(rwChannelName(name), publish);
  const keys = [name, fairQueueName(name), fairTimeoutName(name), ...plain.keys, ...rw.keys];
  const args = [publish, plain.arg, rw.arg, readLeasePrefix(name), channelName(name)];
  return { script: LockScripts.forceUnlock, numKeys: keys.length, keysAndArgs: [...keys, ...args] };
}
