import { now } from '../clock';
import type { LockHold } from '../lock-hold';
import type { LockStore } from '../store/lock-store';
import { HANDOFF_HOLD_BACK, KeyQueue, type Attempt, type QueueHost } from './key-queue';

/** Above this many hold-backs of names without a queue, the ended ones are swept out. */
const HOLD_BACK_SWEEP = 1_000;

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
  /** Hold-backs (until, clock ms) after releases of names that had no queue here. */
  private readonly holdBacks = new Map<string, number>();
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

  /**
   * Whether a new caller for lock `name` must join the local queue: callers are queued (or were
   * within the linger time), or this process released it a moment ago with others listening.
   */
  has(name: string): boolean {
    if (this.queues.has(name)) return true;
    const until = this.holdBacks.get(name);
    if (until === undefined) return false;
    if (until > now()) return true;
    this.holdBacks.delete(name);
    return false;
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
      queue = new KeyQueue(name, this.host, this.noLeaseRetry, this.holdBacks.get(name));
      this.holdBacks.delete(name);
      this.queues.set(name, queue);
    }
    return queue.wait(attempt, waitTime, signal);
  }

  /**
   * This process freed lock `name`; `listeners` processes were told. When other processes were
   * among them (this one's own subscription aside), the next local attempt holds back briefly,
   * so that the one its notice woke takes the lock first.
   */
  released(name: string, listeners: number): void {
    const queue = this.queues.get(name);
    const others = listeners - (queue?.listening ? 1 : 0);
    const holdBackUntil = others > 0 ? now() + HANDOFF_HOLD_BACK : undefined;
    if (queue) {
      queue.released(listeners, holdBackUntil);
      return;
    }
    if (holdBackUntil === undefined) return;
    if (this.holdBacks.size >= HOLD_BACK_SWEEP) {
      const time = now();
      for (const [held, until] of this.holdBacks) if (until <= time) this.holdBacks.delete(held);
    }
    this.holdBacks.set(name, holdBackUntil);
  }

  /** Rejects every waiter (shutdown) and drops the subscriptions. */
  closeAll(reason: unknown): void {
    for (const queue of [...this.queues.values()]) queue.close(reason);
  }
}
