import { now } from '../../time/clock';
import type { LockHold } from '../lock-hold';
import { hasPort, type LockStore, type LockTarget } from '../../store';
import { kindOf, type QueueFamily } from '../kinds';
import { KeyQueue, type Attempt, type QueueHost } from './key-queue';
import { HANDOFF_HOLD_BACK } from './release-hold-back';

/** Above this many hold-backs of names without a queue, the ended ones are swept out. */
const HOLD_BACK_SWEEP = 1_000;

/** What the waiters report to the engine. */
export interface WaitersDriver {
  /** A hold acquired for a waiter that had already given up: release it. */
  abandoned(hold: LockHold): void;
  /** Subscribing or unsubscribing failed; waiting falls back to TTL-capped retries. */
  failed(error: unknown): void;
}

/** Whatever listens on a channel: a queue, or one fair waiter. */
export interface ChannelListener {
  notice(): void;
  reconnected(): void;
  /** Shutdown: reject its waiters with `reason`. */
  close(reason: unknown): void;
}

/**
 * Waiting for busy locks: one KeyQueue per lock (by queue family and name) that has local waiters (or had, within
 * the queue's linger time), each behind one subscription to the store's release notices; and
 * the channels of fair waiters, each its own.
 */
export class LockWaiters {
  /** The queues of each family (see QueueFamily), by lock name. */
  private readonly queues: Record<QueueFamily, Map<string, KeyQueue>> = families();
  /** Who listens on each channel subscribed to. */
  private readonly listeners = new Map<string, ChannelListener>();
  /** Who else listens on a channel (fair waiters on their lock's plain channel). */
  private readonly alsoListening = new Map<string, Set<ChannelListener>>();
  /** Channels subscribed to for their queue (see alsoListen). */
  private readonly queueChannels = new Set<string>();
  /** Hold-backs (until, clock ms) after releases of locks that had no queue here. */
  private readonly holdBacks: Record<QueueFamily, Map<string, number>> = families();
  private readonly host: QueueHost;
  /** The host of the queues whose turns can be passed on (see queueHost). */
  private readonly passingHost: QueueHost;

  constructor(
    private readonly store: LockStore,
    /** Retry delay when the holder's lock has no lease (a foreign lock). */
    private readonly noLeaseRetry: number,
    driver: WaitersDriver,
  ) {
    this.host = {
      subscribe: (channel) => this.subscribe(channel),
      unsubscribe: (channel) => this.unsubscribe(channel),
      abandoned: (hold) => driver.abandoned(hold),
      failed: (error) => driver.failed(error),
      dropped: (queue) => {
        for (const queues of Object.values(this.queues)) {
          if (queues.get(queue.id) !== queue) continue;
          queues.delete(queue.id);
          this.listeners.delete(queue.channel);
        }
      },
    };
    const passer = hasPort(store, 'turnPass') ? store : undefined;
    this.passingHost = {
      ...this.host,
      // A pass that fails (the connection is down) leaves the turn to the others' hold-backs.
      passTurn: passer && ((channel) => void passer.passTurn(channel).catch(() => undefined)),
    };
    store.listen({
      notice: (channel) => {
        this.listeners.get(channel)?.notice();
        for (const listener of this.alsoListening.get(channel) ?? []) listener.notice();
      },
      reconnected: () => {
        for (const listener of [...this.listeners.values()]) listener.reconnected();
      },
    });
  }

  /**
   * Whether a new caller for `target` must join the local queue: callers are queued (or were
   * within the linger time), or this process released it a moment ago with others listening.
   */
  has(target: LockTarget): boolean {
    const family = kindOf(target.kind).queue;
    if (this.queues[family].has(target.name)) return true;
    const holdBacks = this.holdBacks[family];
    const until = holdBacks.get(target.name);
    if (until === undefined) return false;
    if (until > now()) return true;
    holdBacks.delete(target.name);
    return false;
  }

  /**
   * Waits in the target's local queue until an attempt succeeds (resolves the hold), `waitTime`
   * passes (resolves null) or `signal` aborts (rejects with its reason).
   */
  wait(
    target: LockTarget,
    attempt: Attempt,
    waitTime: number,
    signal: AbortSignal | undefined,
  ): Promise<LockHold | null> {
    const family = kindOf(target.kind).queue;
    const { name } = target;
    let queue = this.queues[family].get(name);
    if (queue === undefined) {
      const channel = this.store.channel(target, '');
      const holdBacks = this.holdBacks[family];
      // Passing a turn announces a release: a semaphore's channel carries counts of permits.
      const host = family === 'permit' ? this.host : this.passingHost;
      queue = new KeyQueue(name, channel, host, this.noLeaseRetry, holdBacks.get(name));
      holdBacks.delete(name);
      this.queues[family].set(name, queue);
      this.listeners.set(channel, queue);
    }
    return queue.wait(attempt, waitTime, signal);
  }

  /** Routes the messages of `channel` to `listener` (a fair waiter's own channel). */
  listen(channel: string, listener: ChannelListener): void {
    this.listeners.set(channel, listener);
  }

  /** Stops routing the messages of `channel` to `listener`. */
  unlisten(channel: string, listener: ChannelListener): void {
    if (this.listeners.get(channel) === listener) this.listeners.delete(channel);
  }

  /**
   * Routes the messages of `channel` to `listener` too, and subscribes to it: the subscription
   * is shared with the channel's queue, and ends when the last of them goes.
   */
  /** A fair waiter's subscription failed: reported as a queue's (it waits on by its attempts). */
  failed(error: unknown): void {
    this.host.failed(error);
  }

  alsoListen(channel: string, listener: ChannelListener): Promise<void> {
    const listening = this.alsoListening.get(channel) ?? new Set<ChannelListener>();
    this.alsoListening.set(channel, listening.add(listener));
    return this.store.subscribe(channel);
  }

  stopAlsoListening(channel: string, listener: ChannelListener): Promise<void> {
    const listening = this.alsoListening.get(channel);
    if (!listening?.delete(listener)) return Promise.resolve();
    if (listening.size > 0) return Promise.resolve();
    this.alsoListening.delete(channel);
    return this.queueChannels.has(channel) ? Promise.resolve() : this.store.unsubscribe(channel);
  }

  /** A queue subscribes to its channel. */
  private subscribe(channel: string): Promise<void> {
    this.queueChannels.add(channel);
    return this.store.subscribe(channel);
  }

  /** A queue unsubscribes from its channel, unless others also listen on it. */
  private unsubscribe(channel: string): Promise<void> {
    this.queueChannels.delete(channel);
    return this.alsoListening.has(channel) ? Promise.resolve() : this.store.unsubscribe(channel);
  }

  /** This process is sending a release of `target` (see KeyQueue.releasing). */
  releasing(target: LockTarget): void {
    const kind = kindOf(target.kind);
    if (!kind.holdBack) return;
    const queues = this.queues[kind.queue];
    if (target.names === undefined) queues.get(target.name)?.releasing();
    else for (const name of target.names) queues.get(name)?.releasing();
  }

  /**
   * This process freed `target`; `listeners` processes were told. When other processes were
   * among them (this one's own subscription aside), the next local attempt holds back briefly,
   * so that the one its notice woke takes the lock first. A group counts for each member; a
   * kind whose release tells only the one whose turn it is (a fair lock) holds nothing back.
   */
  released(target: LockTarget, listeners: number): void {
    const kind = kindOf(target.kind);
    if (!kind.holdBack) return;
    const { names } = target;
    if (names === undefined) this.releasedQueue(kind.queue, target.name, listeners);
    else for (const name of names) this.releasedQueue(kind.queue, name, listeners);
  }

  private releasedQueue(family: QueueFamily, name: string, listeners: number): void {
    const queue = this.queues[family].get(name);
    const others = listeners - (queue?.listening ? 1 : 0);
    const holdBackUntil = others > 0 ? now() + HANDOFF_HOLD_BACK : undefined;
    if (queue) {
      queue.released(listeners, holdBackUntil);
      return;
    }
    if (holdBackUntil === undefined) return;
    const holdBacks = this.holdBacks[family];
    if (holdBacks.size >= HOLD_BACK_SWEEP) {
      const time = now();
      for (const [held, until] of holdBacks) if (until <= time) holdBacks.delete(held);
    }
    holdBacks.set(name, holdBackUntil);
  }

  /** Rejects every waiter (shutdown) and drops the subscriptions. */
  closeAll(reason: unknown): void {
    for (const listener of [...this.listeners.values()]) listener.close(reason);
  }
}

/** One empty map per queue family. */
function families<V>(): Record<QueueFamily, Map<string, V>> {
  return { lock: new Map(), rw: new Map(), permit: new Map() };
}
