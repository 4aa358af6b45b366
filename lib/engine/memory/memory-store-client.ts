import type {
  AcquireReply,
  AcquireRequest,
  LockStore,
  NoticeListener,
  StoredHold,
} from '../store/lock-store';

/** The shared lock table a client works on (MemoryLockStore): each call one atomic step. */
export interface MemoryLockTable {
  acquire(request: AcquireRequest): AcquireReply;
  release(hold: StoredHold): number | null;
  renew(holds: readonly StoredHold[], leaseTime: number): boolean[];
  forceUnlock(name: string): boolean;
  remainingTtl(name: string): number | null;
  subscribe(client: MemoryStoreClient, name: string): void;
  unsubscribe(client: MemoryStoreClient, name: string): void;
}

/**
 * One LockService's connection to a MemoryLockStore, as a RedisStore is to a Redis server: its
 * own subscriptions and notice listener. Answers come asynchronously, release notices after
 * the release that caused them has answered (as over a socket).
 */
export class MemoryStoreClient implements LockStore {
  private readonly subscriptions = new Set<string>();
  private listener: NoticeListener | undefined;

  constructor(private readonly store: MemoryLockTable) {}

  acquire(request: AcquireRequest): Promise<AcquireReply> {
    return Promise.resolve(this.store.acquire(request));
  }

  release(hold: StoredHold): Promise<number | null> {
    return Promise.resolve(this.store.release(hold));
  }

  renew(holds: readonly StoredHold[], leaseTime: number): Promise<boolean[]> {
    return Promise.resolve(this.store.renew(holds, leaseTime));
  }

  forceUnlock(_key: string, name: string): Promise<boolean> {
    return Promise.resolve(this.store.forceUnlock(name));
  }

  remainingTtl(_key: string, name: string): Promise<number | null> {
    return Promise.resolve(this.store.remainingTtl(name));
  }

  subscribe(name: string): Promise<void> {
    this.subscriptions.add(name);
    this.store.subscribe(this, name);
    return Promise.resolve();
  }

  unsubscribe(name: string): Promise<void> {
    this.subscriptions.delete(name);
    this.store.unsubscribe(this, name);
    return Promise.resolve();
  }

  listen(listener: NoticeListener): void {
    this.listener = listener;
  }

  /** A release notice of lock `name` arrives (called by the store, never inside a release). */
  deliver(name: string): void {
    if (this.subscriptions.has(name)) this.listener?.notice(name);
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
    for (const name of this.subscriptions) this.store.unsubscribe(this, name);
    this.subscriptions.clear();
    return Promise.resolve();
  }
}
