import type { LockHold } from '../lock-hold';
import type { LockStore } from '../store/lock-store';
import { KeyQueue, type Attempt, type QueueHost } from './key-queue';

/** What the waiters report to the engine. */
export interface WaitersDriver {
  /** A hold acquired for a waiter that had already given up: release it. */
  abandoned(hold: LockHold): void;
  /** Subscribing or unsubscribing failed; waiting falls back to TTL-capped retries. */
  failed(error: unknown): void;
}

/**
 * Waiting for busy locks: one KeyQueue per lock name that has local waiters (or had, within
 * the queue's linger time), each behind one subscription to the store's release notices.
 */
export class LockWaiters {
  private readonly queues = new Map<string, KeyQueue>();
  private readonly host: QueueHost;

  constructor(
    store: LockStore,
    /** Retry delay when the holder's lock has no lease (a foreign lock). */
    private readonly noLeaseRetry: number,
    driver: WaitersDriver,
  ) {
    this.host = {
      subscribe: (name) => store.subscribe(name),
      unsubscribe: (name) => store.unsubscribe(name),
      abandoned: (hold) => driver.abandoned(hold),
      failed: (error) => driver.failed(error),
      dropped: (queue) => {
        if (this.queues.get(queue.name) === queue) this.queues.delete(queue.name);
      },
    };
    store.listen({
      notice: (name) => this.queues.get(name)?.notice(),
      reconnected: () => {
        for (const queue of this.queues.values()) queue.reconnected();
      },
    });
  }

  /** Whether this process queues callers for lock `name` (or did within the linger time). */
  has(name: string): boolean {
    return this.queues.has(name);
  }

  /**
   * Waits in the lock's local queue until an attempt succeeds (resolves the hold), `waitTime`
   * passes (resolves null) or `signal` aborts (rejects with its reason).
   */
  wait(
    name: string,
    attempt: Attempt,
    waitTime: number,
    signal: AbortSignal | undefined,
  ): Promise<LockHold | null> {
    let queue = this.queues.get(name);
    if (queue === undefined) {
      queue = new KeyQueue(name, this.host, this.noLeaseRetry);
      this.queues.set(name, queue);
    }
    return queue.wait(attempt, waitTime, signal);
  }

  /** This process freed lock `name`; `listeners` processes were told. */
  released(name: string, listeners: number): void {
    this.queues.get(name)?.released(listeners);
  }

  /** Rejects every waiter (shutdown) and drops the subscriptions. */
  closeAll(reason: unknown): void {
    for (const queue of [...this.queues.values()]) queue.close(reason);
  }
}
