import { ReplicaSyncError } from '../../errors';
import {
  UNLOCK_LATCH_TTL,
  type AcquireReply,
  type AcquireRequest,
  type StoredHold,
} from '../../store';
import { keySlot } from './key-slot';
import type { PublishCommand, ScriptCall } from './kinds/redis-kind';
import { LockScripts } from './lock-scripts';
import { channelName, unlockLatchKey } from './redis-names';

/** Runs a script call, synced with `replicas` replicas: its reply and the acknowledgements. */
export type RunCall = (call: ScriptCall, replicas: number) => Promise<[unknown, number]>;

/** What the multi-lock needs from the store. */
export interface MultiLockHost {
  readonly run: RunCall;
  /** Whether the keys are spread over a Cluster's slots. */
  readonly sharded: boolean;
  readonly syncTimeout: number;
  publish(): Promise<PublishCommand>;
  /** The release request id of a group's release by `owner` (its unlock latch's suffix). */
  requestId(owner: string): string;
}

/**
 * Multi-locks: several plain locks (RLock layout) taken by one owner, all or none. On one server
 * one multi-acquire.lua call takes the whole group atomically. On a Cluster each slot's members
 * go in one call, slots are taken in ascending slot order (one global order: no wait-for cycle),
 * and when a later slot is busy what was taken is released before the refusal is answered, so
 * a waiting group never holds part of itself.
 */
export class MultiLock {
  constructor(private readonly host: MultiLockHost) {}

  async acquire(request: AcquireRequest): Promise<AcquireReply> {
    const names = request.names ?? [request.name];
    const groups = this.groups(names);
    const replicas = request.syncReplicas ?? 0;
    const taken: string[][] = [];
    for (const group of groups) {
      const call: ScriptCall = {
        script: LockScripts.multiAcquire,
        numKeys: group.length,
        keysAndArgs: [...group, request.leaseTime, request.owner],
      };
      let reply: unknown;
      let acknowledged: number;
      try {
        [reply, acknowledged] = await this.host.run(call, replicas);
      } catch (error) {
        await this.free(request, taken);
        throw error;
      }
      const value = Number(reply);
      if (value < 0) {
        await this.free(request, taken);
        const x = -1 - value;
        const member = group[x % 1000];
        const ttl = Math.floor(x / 1000) - 1;
        return { granted: false, ttl: ttl === -1 ? Infinity : ttl, busy: names.indexOf(member) };
      }
      taken.push(group);
      if (acknowledged < replicas) {
        await this.free(request, taken);
        throw new ReplicaSyncError(request.key, acknowledged, replicas, this.host.syncTimeout);
      }
    }
    return { granted: true, fencingToken: undefined };
  }

  /** Frees every member still held; null when any was not (the others are freed all the same). */
  async release(hold: StoredHold, requestId: string): Promise<number | null> {
    const publish = await this.host.publish();
    const replies = await Promise.all(
      this.groups(hold.names ?? [hold.name]).map((group) =>
        this.host.run(
          this.releaseCall(group, hold.owner, requestId, publish),
          hold.syncReplicas ?? 0,
        ),
      ),
    );
    let listeners = 0;
    for (const [reply] of replies) {
      for (const member of reply as (number | null)[]) {
        if (member === null) return null;
        listeners = Math.max(listeners, Number(member));
      }
    }
    return listeners;
  }

  private releaseCall(
    group: readonly string[],
    owner: string,
    requestId: string,
    publish: PublishCommand,
  ): ScriptCall {
    return {
      script: LockScripts.multiRelease,
      numKeys: group.length + 1,
      keysAndArgs: [
        ...group,
        unlockLatchKey(group[0], requestId),
        owner,
        UNLOCK_LATCH_TTL,
        ...group.map(channelName),
        publish,
      ],
    };
  }

  /** Frees the groups an acquire took before it found a busy one (best effort). */
  private async free(request: AcquireRequest, taken: readonly string[][]): Promise<void> {
    if (taken.length === 0) return;
    await this.release(
      { ...request, names: taken.flat() },
      this.host.requestId(request.owner),
    ).catch(() => undefined);
  }

  /** The members in one group per call: all of them on one server, per slot on a Cluster. */
  private groups(names: readonly string[]): string[][] {
    if (!this.host.sharded) return [[...names]];
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
