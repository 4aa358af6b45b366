import { ReplyError, type Redis } from 'ioredis';
import { LockRedisError } from '../lock.errors';
import type { LockHold } from './lock-hold';
import { MAX_TIMER_DELAY } from './lock-options';
import { UNLOCK_MESSAGE, WAKE_ALL_MESSAGE } from './redis-names';

/** Delay before the head tries again after its attempt failed on the connection, ms. */
const CONNECTION_RETRY_DELAY = 100;

/**
 * How long a process that won the lock recently holds back its attempt after a release message,
 * in ms: far longer than the microseconds by which Redis' delivery order favours one subscriber,
 * short next to a handoff across processes.
 */
const HOLD_BACK_DELAY = 2;

/**
 * How long a queue stays subscribed after its last waiter left, in ms: a caller that comes back
 * for the lock soon (a worker in a loop) finds the subscription, and the turn-taking state, still
 * there instead of paying UNSUBSCRIBE + SUBSCRIBE.
 */
const QUEUE_LINGER = 1_000;

/** One acquire attempt: the hold on success, else the holder's PTTL in ms. */
export type Attempt = () => Promise<LockHold | number>;

/** What the waiters need from the engine. */
export interface WaitersDriver {
  /** A hold acquired for a waiter that had already given up: release it. */
  abandoned(hold: LockHold): void;
  /** SUBSCRIBE or UNSUBSCRIBE failed; waiting falls back to TTL-capped retries. */
  failed(error: unknown): void;
}

interface Waiter {
  attempt: Attempt;
  resolve: (hold: LockHold | null) => void;
  reject: (reason: unknown) => void;
  done: boolean;
  timer: NodeJS.Timeout | undefined;
  cancel: (() => void) | undefined;
}

/** The local queue of one lock's waiters. Only its head sends acquire attempts. */
class Queue {
  readonly waiters: Waiter[] = [];
  subscribed = false;
  attempting = false;
  /** A release was announced while the head's attempt was in flight: try again at once. */
  wakePending = false;
  /** ... and that was a release message (see `woken`). */
  wakePendingWoken = false;
  /** Retries after the holder's PTTL, in case a release message is missed. */
  retryTimer: NodeJS.Timeout | undefined;
  disposed = false;
  /** Drops the queue once it has been empty for QUEUE_LINGER ms. */
  lingerTimer: NodeJS.Timeout | undefined;
  /** The attempt in flight (or pending) answers a release message. */
  woken = false;
  /** A release message was answered here, but another client took the lock first. */
  contended = false;
  /** Release messages seen since this process last took the lock. */
  releasesSinceWin = Infinity;
  /** Processes that received this process's last release of the lock (itself included). */
  listeners = 1;

  constructor(readonly channel: string) {}
}

/**
 * Waiting for busy locks, driven by one pub/sub connection. Waiters for one lock queue locally
 * (FIFO) behind one SUBSCRIBE to its channel; only the head of the queue sends acquire attempts:
 * one after subscribing, one per release message, and one when the holder's PTTL runs out (so a
 * lost message costs at most one TTL). No fixed polling interval. An attempt that fails on the
 * connection is repeated every CONNECTION_RETRY_DELAY ms until the wait ends; one that Redis
 * refuses rejects its waiter.
 *
 * Fair turns between processes: Redis delivers a release message to subscribers in a fixed
 * order, so left alone the same process would win nearly every race. Once a queue has lost such
 * a race (other processes want the lock too), a process that took the lock holds back its
 * attempts by HOLD_BACK_DELAY ms until it has seen as many releases as there were other
 * processes listening when it last released (what PUBLISH counted): the others take their turn
 * first. A wrong count costs at most one short delay per release, never a missed handoff.
 */
export class LockWaiters {
  private readonly queues = new Map<string, Queue>();

  constructor(
    private readonly subscriber: Redis,
    /** Retry delay when the holder's lock has no TTL (a foreign lock without a lease). */
    private readonly noTtlRetry: number,
    private readonly driver: WaitersDriver,
  ) {
    subscriber.on('message', (channel: string, message: string) => {
      if (message !== UNLOCK_MESSAGE && message !== WAKE_ALL_MESSAGE) return;
      const queue = this.queues.get(channel);
      if (queue) this.wake(queue);
    });
    // After a reconnect ioredis subscribes again, but releases announced meanwhile are gone;
    // a SUBSCRIBE that had failed is sent again here (its confirmation then tries).
    subscriber.on('ready', () => {
      for (const queue of this.queues.values()) {
        if (queue.subscribed) this.attempt(queue);
        else this.subscribe(queue);
      }
    });
  }

  /** Whether this process queues callers for the lock on `channel` (or did within QUEUE_LINGER). */
  has(channel: string): boolean {
    return this.queues.has(channel);
  }

  /**
   * Waits in the lock's local queue until an attempt succeeds (resolves the hold), `waitTime`
   * passes (resolves null) or `signal` aborts (rejects with its reason). An attempt that
   * succeeds after its caller gave up is handed to `driver.abandoned`.
   */
  wait(
    channel: string,
    attempt: Attempt,
    waitTime: number,
    signal: AbortSignal | undefined,
  ): Promise<LockHold | null> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    let queue = this.queues.get(channel);
    let idle = false;
    if (queue === undefined) {
      queue = new Queue(channel);
      this.queues.set(channel, queue);
      this.subscribe(queue);
    } else {
      // A lingering queue gets a head again: it tries at once.
      idle = queue.waiters.length === 0 && !queue.attempting;
    }
    const target = queue;
    clearTimeout(target.lingerTimer);
    return new Promise<LockHold | null>((resolve, reject) => {
      const waiter: Waiter = {
        attempt,
        resolve,
        reject,
        done: false,
        timer: undefined,
        cancel: undefined,
      };
      if (Number.isFinite(waitTime)) {
        waiter.timer = setTimeout(() => this.leave(target, waiter, () => resolve(null)), waitTime);
      }
      if (signal) {
        const onAbort = () => this.leave(target, waiter, () => reject(signal.reason));
        signal.addEventListener('abort', onAbort, { once: true });
        waiter.cancel = () => signal.removeEventListener('abort', onAbort);
      }
      target.waiters.push(waiter);
      if (idle) this.attempt(target);
    });
  }

  /** This process freed the lock on `channel`; `listeners` processes were told (PUBLISH's count). */
  released(channel: string, listeners: number): void {
    const queue = this.queues.get(channel);
    if (queue === undefined) return;
    queue.listeners = listeners;
    // Without a subscription no message will come: local waiters try now.
    if (!queue.subscribed) this.attempt(queue);
  }

  /** Rejects every waiter (shutdown) and drops the subscriptions. */
  rejectAll(reason: unknown): void {
    for (const queue of [...this.queues.values()]) {
      for (const waiter of [...queue.waiters])
        this.leave(queue, waiter, () => waiter.reject(reason));
      this.dispose(queue);
    }
  }

  private subscribe(queue: Queue): void {
    this.subscriber.subscribe(queue.channel).then(
      () => {
        queue.subscribed = true;
        // A release may have been announced before the subscription took effect: try now.
        this.attempt(queue);
      },
      (error: unknown) => {
        this.driver.failed(error);
        this.attempt(queue);
      },
    );
  }

  /** A release message: the head tries now, or after HOLD_BACK_DELAY if it is not its turn. */
  private wake(queue: Queue): void {
    const holdBack = queue.contended && queue.releasesSinceWin < queue.listeners - 1;
    queue.releasesSinceWin++;
    if (holdBack && !queue.attempting) this.retryAfter(queue, HOLD_BACK_DELAY);
    else this.attempt(queue, true);
  }

  /** The head of the queue tries to acquire (or notes to retry if it is already trying). */
  private attempt(queue: Queue, woken = false): void {
    if (queue.disposed) return;
    if (queue.attempting) {
      queue.wakePending = true;
      queue.wakePendingWoken ||= woken;
      return;
    }
    const head = queue.waiters[0];
    if (head === undefined) return;
    clearTimeout(queue.retryTimer);
    queue.retryTimer = undefined;
    queue.attempting = true;
    queue.wakePending = false;
    queue.wakePendingWoken = false;
    queue.woken = woken;
    head.attempt().then(
      (result) => this.settle(queue, head, result),
      (error: unknown) => this.settle(queue, head, error, true),
    );
  }

  private settle(queue: Queue, head: Waiter, result: unknown, failed = false): void {
    queue.attempting = false;
    if (failed && connectionFailed(result)) {
      // Redis may be back soon: the head keeps its place and its wait time bounds the retries.
      this.retryAfter(queue, CONNECTION_RETRY_DELAY);
      return;
    }
    if (failed) {
      // Redis answered with an error: the head gets it, the next waiter tries on its own, so
      // nobody hangs on a server that refuses locks.
      if (!head.done) this.leave(queue, head, () => head.reject(result));
      if (queue.waiters.length > 0) this.attempt(queue);
      return;
    }
    if (typeof result !== 'number') {
      const hold = result as LockHold;
      queue.releasesSinceWin = 0;
      if (head.done) this.driver.abandoned(hold);
      else this.leave(queue, head, () => head.resolve(hold));
      // The next waiter waits for this hold's release message, capped by its lease.
      if (!queue.disposed) this.retryAfter(queue, hold.leaseTime);
      return;
    }
    // The lock was free after a release message, yet someone else got it: other clients compete.
    if (queue.woken) queue.contended = true;
    if (queue.wakePending) this.attempt(queue, queue.wakePendingWoken);
    else this.retryAfter(queue, result < 0 ? (result === -2 ? 0 : this.noTtlRetry) : result);
  }

  private retryAfter(queue: Queue, delay: number): void {
    if (queue.waiters.length === 0 || queue.attempting) return;
    clearTimeout(queue.retryTimer);
    // A foreign lock's PTTL may exceed what a timer holds (it would fire at once).
    queue.retryTimer = setTimeout(() => this.attempt(queue), Math.min(delay, MAX_TIMER_DELAY));
    queue.retryTimer.unref();
  }

  /** Removes a waiter, settles it, and drops the queue once empty. */
  private leave(queue: Queue, waiter: Waiter, settle: () => void): void {
    if (waiter.done) return;
    waiter.done = true;
    clearTimeout(waiter.timer);
    waiter.cancel?.();
    const index = queue.waiters.indexOf(waiter);
    if (index >= 0) queue.waiters.splice(index, 1);
    settle();
    if (queue.waiters.length === 0 && !queue.disposed) {
      clearTimeout(queue.retryTimer);
      queue.lingerTimer = setTimeout(() => this.dispose(queue), QUEUE_LINGER);
      queue.lingerTimer.unref();
    }
  }

  /** Drops an empty queue and its subscription. */
  private dispose(queue: Queue): void {
    if (queue.waiters.length > 0 || queue.disposed) return;
    queue.disposed = true;
    clearTimeout(queue.lingerTimer);
    clearTimeout(queue.retryTimer);
    this.queues.delete(queue.channel);
    this.subscriber.unsubscribe(queue.channel).catch((error: unknown) => this.driver.failed(error));
  }
}

/** Whether an attempt failed on the way to Redis (retried) rather than being refused by it. */
function connectionFailed(error: unknown): boolean {
  return error instanceof LockRedisError && !(error.cause instanceof ReplyError);
}
