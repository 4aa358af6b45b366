import { ReplicaSyncError } from '../../../errors';
import {
  GRANTED,
  type AcquireReply,
  type AcquireRequest,
  type LockTarget,
  type StoredHold,
} from '../../../store';
import { keySlot } from '../key-slot';
import { channelName, unlockLatchKey } from '../redis-names';
import { MULTI_ACQUIRE, MULTI_RELEASE } from '../scripts/multi';
import type { RenewEntry } from '../scripts/renew';
import { scriptCall } from '../scripts/script-definition';
import { forceUnlockLock, hashTtl, type KindHost, type RedisKind } from './redis-kind';

/**
 * Multi-locks: several plain locks (RLock layout) taken by one owner, all or none. On one server
 * one multi-acquire.lua call takes the whole group atomically. On a Cluster each slot's members
 * go in one call, slots are taken in ascending slot order (one global order: no wait-for cycle),
 * and when a later slot is busy what was taken is released before the refusal is answered, so
 * a waiting group never holds part of itself. Waiters wait on a member's plain lock channel.
 */
export class MultiKind implements RedisKind {
  readonly shardable = true;
  readonly requestDigit = '4';
  readonly freeLateGrant = true;
  readonly direct = undefined;

  constructor(private readonly host: KindHost) {}

  async acquire(request: AcquireRequest, replicas: number): Promise<AcquireReply> {
    const names = request.names ?? [request.name];
    const taken: string[][] = [];
    for (const group of this.groups(names)) {
      const call = scriptCall(MULTI_ACQUIRE, group, request.leaseTime, request.owner);
      let reply: unknown;
      let acknowledged: number;
      try {
        [reply, acknowledged] = await this.host.run(call, replicas);
      } catch (error) {
        await this.free(request, taken);
        throw error;
      }
      const busy = call.decode(reply);
      if (busy !== null) {
        await this.free(request, taken);
        return { granted: false, ttl: busy.ttl, busy: names.indexOf(group[busy.member]) };
      }
      taken.push(group);
      if (acknowledged < replicas) {
        await this.free(request, taken);
        throw new ReplicaSyncError(request.key, acknowledged, replicas, this.host.syncTimeout);
      }
    }
    return GRANTED;
  }

  /** Frees every member still held; null when any was not (the others are freed all the same). */
  async release(hold: StoredHold, requestId: string, replicas: number): Promise<number | null> {
    const publish = await this.host.publish();
    const released = await Promise.all(
      this.groups(hold.names ?? [hold.name]).map(async (group) => {
        const latch = unlockLatchKey(group[0], requestId);
        const call = scriptCall(MULTI_RELEASE, group, latch, hold.owner, publish);
        const [reply] = await this.host.run(call, replicas);
        return call.decode(reply);
      }),
    );
    let listeners = 0;
    for (const told of released) {
      if (told === null) return null;
      listeners = Math.max(listeners, told);
    }
    return listeners;
  }

  /** Each member's hash ('l', as a plain lock's). */
  renewEntries(hold: StoredHold, index: number, out: RenewEntry[]): void {
    for (const name of hold.names ?? [hold.name]) {
      out.push({ letter: 'l', keys: [name], owner: hold.owner, hold: index });
    }
  }

  forceUnlock(target: LockTarget): Promise<boolean> {
    return forceUnlockLock(this.host, target);
  }

  remainingTtl(target: LockTarget): Promise<number | null> {
    return hashTtl(this.host.client, target.name);
  }

  /** A member's plain lock channel: a group waits in the busy member's queue. */
  channel(target: LockTarget): string {
    return channelName(target.name);
  }

  /** Frees the groups an acquire took before it found a busy one (best effort). */
  private async free(request: AcquireRequest, taken: readonly string[][]): Promise<void> {
    if (taken.length === 0) return;
    const requestId = this.host.requestId(request.owner, this.requestDigit);
    await this.release(
      { ...request, names: taken.flat() },
      requestId,
      request.syncReplicas ?? 0,
    ).catch(() => undefined);
  }

  /** The members in one group per call: all of them on one server, per slot on a Cluster. */
  private groups(names: readonly string[]): string[][] {
    if (!this.host.client.isCluster) return [[...names]];
    const bySlot = new Map<number, string[]>();
    for (const name of names) {
      const slot = keySlot(name);
      const group = bySlot.get(slot);
      if (group) group.push(name);
      else bySlot.set(slot, [name]);
    }
    return [...bySlot.entries()].sort(([a], [b]) => a - b).map(([, group]) => group);
  }
}
