import {
  noReplicasError,
  type AcquireReply,
  type AcquireRequest,
  type FairQueuePort,
  type KeptReleasePort,
  type LockStore,
  type PermitCountPort,
  type LockTarget,
  type NoticeListener,
  type StoredHold,
  type TurnPassPort,
} from '../../store';

/** The shared lock table a client works on (MemoryLockStore): each call one atomic step. */
export interface MemoryLockTable {
  acquire(request: AcquireRequest): AcquireReply;
  release(hold: StoredHold): number | null;
  releaseKept(hold: StoredHold, keepFor: number): boolean;
  renew(holds: readonly StoredHold[], leaseTime: number): boolean[];
  leave(request: AcquireRequest): void;
  forceUnlock(target: LockTarget): boolean;
  remainingTtl(target: LockTarget): number | null;
  available(target: LockTarget): number;
  channel(target: LockTarget, owner: string): string;
  subscribe(client: MemoryStoreClient, channel: string): void;
  unsubscribe(client: MemoryStoreClient, channel: string): void;
  publish(channel: string): number;
}

/**
 * One LockService's connection to a MemoryLockStore, as a RedisStore is to a Redis server: its
 * own subscriptions and notice listener. Answers come asynchronously, notices after the call
 * that caused them has answered (as over a socket).
 */
export class MemoryStoreClient
  implements LockStore, FairQueuePort, PermitCountPort, KeptReleasePort, TurnPassPort
{
  private readonly subscriptions = new Set<string>();
  private listener: NoticeListener | undefined;

  constructor(private readonly store: MemoryLockTable) {}

  /** Rejects `syncReplicas` above 0: there is no replica (noReplicasError). */
  acquire(request: AcquireRequest): Promise<AcquireReply> {
    if ((request.syncReplicas ?? 0) > 0) return Promise.reject(noReplicasError());
    return answer(() => this.store.acquire(request));
  }

  release(hold: StoredHold): Promise<number | null> {
    return Promise.resolve(this.store.release(hold));
  }

  passTurn(channel: string): Promise<void> {
    this.store.publish(channel);
    return Promise.resolve();
  }

  releaseKept(hold: StoredHold, keepFor: number): Promise<boolean> {
    return answer(() => this.store.releaseKept(hold, keepFor));
  }

  renew(holds: readonly StoredHold[], leaseTime: number): Promise<boolean[]> {
    return Promise.resolve(this.store.renew(holds, leaseTime));
  }

  leave(request: AcquireRequest): Promise<void> {
    this.store.leave(request);
    return Promise.resolve();
  }

  forceUnlock(target: LockTarget): Promise<boolean> {
    return answer(() => this.store.forceUnlock(target));
  }

  remainingTtl(target: LockTarget): Promise<number | null> {
    return answer(() => this.store.remainingTtl(target));
  }

  available(target: LockTarget): Promise<number> {
    return answer(() => this.store.available(target));
  }

  channel(target: LockTarget, owner: string): string {
    return this.store.channel(target, owner);
  }

  subscribe(channel: string): Promise<void> {
    this.subscriptions.add(channel);
    this.store.subscribe(this, channel);
    return Promise.resolve();
  }

  unsubscribe(channel: string): Promise<void> {
    this.subscriptions.delete(channel);
    this.store.unsubscribe(this, channel);
    return Promise.resolve();
  }

  listen(listener: NoticeListener): void {
    this.listener = listener;
  }

  /** A message on `channel` arrives (called by the store, never inside the call that sent it). */
  deliver(channel: string): void {
    if (this.subscriptions.has(channel)) this.listener?.notice(channel);
  }

  /** Nothing to connect to: resolves at once. */
  connect(): Promise<void> {
    return Promise.resolve();
  }

  /** Round-trip time to the store: none, 0 ms. */
  ping(): Promise<number> {
    return Promise.resolve(0);
  }

  /** Drops this connection's subscriptions; the store and its locks stay for others. */
  close(): Promise<void> {
    for (const channel of this.subscriptions) this.store.unsubscribe(this, channel);
    this.subscriptions.clear();
    return Promise.resolve();
  }
}

/** The store's answer, or its refusal (a thrown error) as a rejection, as a server answers. */
function answer<T>(call: () => T): Promise<T> {
  try {
    return Promise.resolve(call());
  } catch (error) {
    return Promise.reject(error);
  }
}
