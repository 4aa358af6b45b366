import { UNLOCK_LATCH_TTL, type AcquireRequest, type StoredHold } from '../../../store';
import { LockScripts } from '../lock-scripts';
import { readLeaseKey, readLeasePrefix, rwChannelName } from '../redis-names';
import { callWithChannel, listenersOrNull, refusedTtl, type RedisKind } from './redis-kind';

const GRANTED_SHARED = { granted: true, fencingToken: undefined, shared: true } as const;
const GRANTED = { granted: true, fencingToken: undefined } as const;

/** Read holds of a read-write lock (Redisson's RReadWriteLock.readLock()): shared. */
export const readKind: RedisKind = {
  shardable: true,
  acquire: (request: AcquireRequest) => ({
    script: LockScripts.readAcquire,
    numKeys: 2,
    keysAndArgs: [
      request.name,
      readLeaseKey(request.name, request.owner),
      request.leaseTime,
      request.owner,
    ],
  }),
  acquired: (reply) => (Number(reply) === 0 ? GRANTED_SHARED : refusedTtl(Number(reply))),
  release: (hold: StoredHold, latch: string, publish) =>
    callWithChannel(
      LockScripts.readRelease,
      [hold.name, readLeaseKey(hold.name, hold.owner), latch],
      rwChannelName(hold.name),
      publish,
      [hold.owner, UNLOCK_LATCH_TTL, readLeasePrefix(hold.name), publish],
    ),
  // -1: this read hold ended while others still hold the lock (nobody was told).
  released: listenersOrNull,
  channel: (target) => rwChannelName(target.name),
};

/** The write hold of a read-write lock (Redisson's RReadWriteLock.writeLock()): exclusive. */
export const writeKind: RedisKind = {
  shardable: true,
  acquire: (request: AcquireRequest) => ({
    script: LockScripts.writeAcquire,
    numKeys: 1,
    keysAndArgs: [request.name, request.leaseTime, request.owner],
  }),
  acquired: (reply) => (Number(reply) === 0 ? GRANTED : refusedTtl(Number(reply))),
  release: (hold: StoredHold, latch: string, publish) =>
    callWithChannel(
      LockScripts.writeRelease,
      [hold.name, latch],
      rwChannelName(hold.name),
      publish,
      [hold.owner, UNLOCK_LATCH_TTL, publish],
    ),
  released: listenersOrNull,
  channel: (target) => rwChannelName(target.name),
};
