import { counted, unsynced, type Busy } from '../busy';
import { now } from '../../time/clock';
import type { HoldCalls } from '../hold-calls';
import type { LockHold } from '../lock-hold';
import type { ResolvedLockOptions } from '../options/lock-options';
import { isConnectionError } from '../../errors';
import { PLAIN_KIND } from '../kinds';
import { requirePort, type LockStore, type LockTarget } from '../../store';
import { DeadlineTimer, within } from '../../time/time-limit';
import { leaveQueue } from './fair-leave';
import type { ChannelListener, LockWaiters } from './lock-waiters';

/** Delay before trying again after an attempt failed on the connection, ms. */
const CONNECTION_RETRY_DELAY = 100;

/** What a fair acquisition needs of the engine. */
export interface FairDriver {
  readonly store: LockStore;
  readonly calls: HoldCalls;
  readonly waiters: LockWaiters;
  /** Place timeout of fair waiters, ms. */
  readonly fairQueueTimeout: number;
  /** Retry delay when the holder's lock has no lease (a foreign lock), ms. */
  readonly noLeaseRetry: number;
  /** The shutdown error once the engine began closing. */
  closing(): unknown;
  /** Runs `fn` outside every call chain. */
  readonly outside: <T>(fn: () => T) => T;
}

/**
 * Takes a fair lock: a no-wait try leaves no trace; a waiter joins the queue in the store with
 * its first attempt, then waits for its turn on its own channel and for releases of the plain
 * lock of the name (see FairWait). The hold, or null when the wait is over (`busy` gets the
 * holder's lease). A grant undone for want of replica acknowledgements is tried again within
 * the wait, the waiter back at the head of the queue.
 */
export async function takeFair(
  driver: FairDriver,
  target: LockTarget,
  opts: ResolvedLockOptions,
  busy: Busy,
): Promise<LockHold | null> {
  const { calls, store, waiters } = driver;
  const fairQueue = requirePort(store, 'fairQueue');
  const owner = calls.newOwner();
  const queue = opts.waitTime > 0;
  const extra = { owner, request: { queue, placeTimeout: driver.fairQueueTimeout } };
  const attempt = () => {
    counted(busy);
    return calls.attempt(target, opts, extra).then(
      (result) => {
        if (typeof result === 'number') busy.leaseEnds = now() + result;
        return result;
      },
      (error: unknown) => unsynced(error, busy),
    );
  };
  const request = { ...target, owner, leaseTime: opts.leaseTime, fencing: false, ...extra.request };
  const leave = () =>
    leaveQueue(fairQueue, request, () => driver.closing() !== undefined, driver.outside);
  // A first attempt that failed may still have queued the waiter: it leaves.
  const first = await attempt().catch(async (error: unknown) => {
    if (queue) await leave();
    throw error;
  });
  if (typeof first !== 'number') return first;
  if (!queue) return null;
  const channel = store.channel(target, owner);
  // A fair waiter also wakes on releases of the plain lock of the name (a plain holder's).
  const plain = store.channel({ ...target, kind: PLAIN_KIND.id }, '');
  const unsubscribe = (listener: ChannelListener) => {
    waiters.unlisten(channel, listener);
    return Promise.all([
      store.unsubscribe(channel),
      waiters.stopAlsoListening(plain, listener),
    ]).then(() => undefined);
  };
  const wait = new FairWait(
    {
      attempt,
      leave,
      subscribe: (listener) => {
        waiters.listen(channel, listener);
        const subscribed = [store.subscribe(channel), waiters.alsoListen(plain, listener)];
        return Promise.all(subscribed).then(
          () => true,
          async (error: unknown) => {
            // Reported as a queue's is; the waiter waits on by its attempts. No listener stays.
            waiters.failed(error);
            await unsubscribe(listener).catch(() => undefined);
            return false;
          },
        );
      },
      unsubscribe,
    },
    opts.waitTime,
    Math.max(1, Math.floor(driver.fairQueueTimeout / 3)),
    opts.signal,
  );
  return wait.run(driver.noLeaseRetry);
}

/** What a fair waiter needs: its attempts, its channel, and leaving the queue. */
export interface FairWaitHost {
  /** One attempt by this waiter's owner id (it joins, or keeps, its place in the queue). */
  attempt(): Promise<LockHold | number>;
  /** Leaves the queue in the store (see leaveQueue); never rejects. */
  leave(): Promise<void>;
  /**
   * Starts routing the messages of this waiter's channels here and subscribes to them: true once
   * subscribed; false when that failed (reported; nothing stays subscribed). Never rejects.
   */
  subscribe(listener: ChannelListener): Promise<boolean>;
  unsubscribe(listener: ChannelListener): Promise<void>;
}

/**
 * One waiter for a fair lock (Redisson's RFairLock): every attempt uses the same owner id, so it
 * keeps its place in the queue in Redis, and it waits on its own channel, where a release tells
 * only the queue's head (and on the plain lock's, for releases of a plain holder). It tries
 * again when told, when the wait the store asked for is over (the holder's lease, or the
 * deadline of the waiter ahead: a dead waiter is dropped then), after a connection error, and
 * at least every `renewEvery` ms: each attempt renews its place, which lasts the place timeout
 * from the attempt, so its place never runs out while it lives, whatever others do. Giving up
 * (timeout, abort, shutdown) leaves the queue at once.
 */
export class FairWait implements ChannelListener {
  private wake: (() => void) | undefined;
  /** Ends a sleep (never early: the store's wait is measured from its answer). */
  private readonly timer = new DeadlineTimer(() => this.wake?.());
  private closed: Error | undefined;
  private notified = false;

  constructor(
    private readonly host: FairWaitHost,
    private readonly waitTime: number,
    /** The longest sleep between two attempts, ms: well within the place timeout. */
    private readonly renewEvery: number,
    private readonly signal: AbortSignal | undefined,
  ) {}

  /** Resolves the hold, or null when the wait is over; rejects on abort or shutdown. */
  async run(firstRetry: number): Promise<LockHold | null> {
    const deadline = now() + this.waitTime;
    const onAbort = () => this.wake?.();
    this.signal?.addEventListener('abort', onAbort);
    const subscription = this.host.subscribe(this);
    try {
      // A turn announced before the subscription took effect is caught by the first attempt.
      // With the connection cut it may not answer for long (or fail): the attempts do not wait
      // for it past renewEvery or the wait's end, and go on without it (every renewEvery, and
      // when the store's wait is over).
      await within(subscription, Math.min(this.renewEvery, Math.max(0, deadline - now())));
      let retry = 0;
      for (;;) {
        this.check();
        const result = await this.attemptOnce().catch((error: unknown) => {
          if (!isConnectionError(error)) throw error;
          return CONNECTION_RETRY_DELAY;
        });
        if (typeof result !== 'number') return result;
        retry = result === Infinity ? firstRetry : result;
        const left = deadline - now();
        if (left <= 0) {
          await this.host.leave();
          return null;
        }
        await this.sleep(Math.min(retry, left, this.renewEvery));
      }
    } catch (error) {
      await this.host.leave();
      throw error;
    } finally {
      this.signal?.removeEventListener('abort', onAbort);
      this.timer.cancel();
      void subscription.then((subscribed) => {
        if (subscribed) void this.host.unsubscribe(this).catch(() => undefined);
      });
    }
  }

  notice(): void {
    this.notified = true;
    this.wake?.();
  }

  reconnected(): void {
    this.notice();
  }

  close(reason: unknown): void {
    this.closed = reason instanceof Error ? reason : new Error('The lock service was closed.');
    this.wake?.();
  }

  private attemptOnce(): Promise<LockHold | number> {
    this.notified = false;
    return this.host.attempt();
  }

  private check(): void {
    this.signal?.throwIfAborted();
    if (this.closed !== undefined) throw this.closed;
  }

  /** Waits `delay` ms, or until told, aborted or closed. */
  private sleep(delay: number): Promise<void> {
    if (this.notified || this.signal?.aborted || this.closed !== undefined)
      return Promise.resolve();
    return new Promise<void>((resolve) => {
      this.wake = () => {
        this.wake = undefined;
        this.timer.cancel();
        resolve();
      };
      this.timer.start(delay);
    });
  }
}
