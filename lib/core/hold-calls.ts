import { randomUUID } from 'node:crypto';
import {
  isConnectionError,
  LockError,
  LockRedisError,
  messageOf,
  StoreUnreachableError,
} from '../errors';
import { now } from '../time/clock';
import { LockHold } from './lock-hold';
import { GivenOwners } from './given-owners';
import type { LockHolds } from './lock-holds';
import type { LockObserver } from './lock-observer';
import type { ResolvedLockOptions } from './options/lock-options';
import {
  hasPort,
  type AcquireReply,
  type AcquireRequest,
  type FastPathPort,
  type LockStore,
  type LockTarget,
} from '../store';
import { sleep, within } from '../time/time-limit';
import { boundedRelease, type ReleaseDriver } from './bounded-release';
import type { LockWaiters } from './waiting/lock-waiters';

/**
 * Delay between tries to free a grant whose answer was lost, ms, when a try was sent and failed
 * (a try refused while the store is unreachable waits for it to be back instead).
 */
const CLEANUP_RETRY_DELAY = 200;

/** What an attempt may add to the plain one. */
export interface AttemptExtra {
  /** The owner id to use (a fair waiter's, or a write holder's for a downgrade). */
  readonly owner?: string;
  /** Fields of the store request (`fair`: queue, placeTimeout). */
  readonly request?: { readonly queue?: boolean; readonly placeTimeout?: number };
  /** Gets the store's refusal (a group's busy member). */
  readonly refused?: (reply: { readonly ttl: number; readonly busy?: number }) => void;
}

/** What the store calls need from the engine. */
export interface HoldCallsDriver extends ReleaseDriver {
  readonly observer: LockObserver | undefined;
  /** The shutdown error once close() began. */
  closing(): LockError | undefined;
}

/**
 * The engine's calls to the store, each with its guarantees: an acquire attempt has a fresh
 * owner id and a time bound, and frees a grant that comes too late or whose answer was lost; a
 * release is bounded and reports a loss it finds; a hold nobody uses is dropped quietly.
 */
export class HoldCalls {
  /** This engine's id: the first half of every owner id. */
  readonly clientId = randomUUID();
  private ownerSeq = 0;
  /** Attempts sent and not yet settled; drained() waits for them. */
  private inFlight = 0;
  /** Owner ids given by callers, so a timed-out attempt never frees a newer one's hold. */
  private readonly givenOwners = new GivenOwners();
  private whenDrained: (() => void) | undefined;
  /** The store's fast path, when it has one (looked up once: every lock call takes it). */
  private readonly fastPath: FastPathPort | undefined;

  constructor(
    private readonly store: LockStore,
    private readonly holds: LockHolds,
    private readonly waiters: LockWaiters,
    private readonly driver: HoldCallsDriver,
  ) {
    this.fastPath = hasPort(store, 'fastPath') ? store : undefined;
  }

  /** Resolves once no attempt is in flight. */
  drained(): Promise<void> {
    if (this.inFlight === 0) return Promise.resolve();
    return new Promise<void>((resolve) => (this.whenDrained = resolve));
  }

  /** A new owner id: `<client uuid>:<sequence number>`, never used before. */
  newOwner(): string {
    return `${this.clientId}:${++this.ownerSeq}`;
  }

  /**
   * One acquire attempt, by a fresh owner id unless `extra.owner` names one: the hold, or how
   * long the holder's lease still runs (`extra.refused` also gets the store's answer). Bounded
   * in time (the wait, kept between a third of the lease and the lease); a grant that comes
   * later, or is read past its hand-over time (LockHold.handOverBy), is freed, and so is one
   * whose answer was lost. `then` maps the result in the step that reads the answer.
   */
  attempt<R = LockHold | number>(
    target: LockTarget,
    opts: ResolvedLockOptions,
    extra?: AttemptExtra,
    then?: (result: LockHold | number) => R | Promise<R>,
  ): Promise<R> {
    const closing = this.driver.closing();
    if (closing) return Promise.reject(closing);
    const given = extra?.owner !== undefined;
    const owner = extra?.owner ?? this.newOwner();
    const seq = given ? this.givenOwners.sent(owner) : 0;
    // A newer attempt of this owner id answers for its hold (never true of a fresh id).
    const superseded = () => given && this.givenOwners.superseded(owner, seq);
    const { key } = target;
    const { leaseTime, fencing, syncReplicas } = opts;
    const sentAt = now();
    const limit = Math.min(Math.max(opts.waitTime, leaseTime / 3), leaseTime);
    this.inFlight++;
    return new Promise<R>((resolve, reject) => {
      let timedOut = false;
      let timer: NodeJS.Timeout | undefined = undefined;
      // A literal of one shape (no spread) on the common path: this runs for every lock call.
      const request: AcquireRequest = {
        kind: target.kind,
        key,
        name: target.name,
        names: target.names,
        permits: target.permits,
        owner,
        leaseTime,
        fencing,
        syncReplicas,
        queue: extra?.request?.queue,
        placeTimeout: extra?.request?.placeTimeout,
      };
      const answered = (reply: AcquireReply) => {
        // Late, and a newer attempt of the owner id was sent: that one holds what this got.
        const replaced = timedOut && superseded();
        this.settled(timer, given ? owner : undefined);
        if (replaced) return;
        if (!reply.granted) extra?.refused?.(reply);
        let result: LockHold | number;
        try {
          result = this.granted(reply, target, owner, opts, sentAt);
          // An answer after the bound: the caller has moved on, so a late grant is freed.
          if (!timedOut) resolve(then ? then(result) : (result as R));
          else if (typeof result !== 'number') void this.drop(result);
        } catch (error) {
          reject(error);
        }
      };
      const failed = (error: unknown) => {
        this.settled(timer, given ? owner : undefined);
        if (timedOut) return;
        // A script that failed midway may have written the lock (Redis keeps a script's writes).
        if (error instanceof LockRedisError && !(error instanceof StoreUnreachableError))
          void this.cleanup(target, owner, sentAt + leaseTime, superseded);
        reject(error);
      };
      const fastPath = this.fastPath;
      if (fastPath !== undefined) fastPath.acquireInto(request, answered, failed);
      else this.store.acquire(request).then(answered, failed);
      // Set once the request is on its way (the store answers in a later step), so it overlaps
      // the round trip instead of delaying the request.
      timer = setTimeout(() => {
        timedOut = true;
        void this.cleanup(target, owner, sentAt + leaseTime, superseded);
        reject(new LockRedisError(key, 'acquire', new Error(`no answer within ${limit} ms`)));
      }, limit);
      timer.unref();
    });
  }

  /** An attempt settled: stop its bound, forget its given owner id, wake close() after the last. */
  private settled(timer: NodeJS.Timeout | undefined, owner: string | undefined): void {
    clearTimeout(timer);
    if (owner !== undefined) this.givenOwners.settled(owner);
    if (--this.inFlight === 0) this.whenDrained?.();
  }

  private granted(
    reply: AcquireReply,
    target: LockTarget,
    owner: string,
    opts: ResolvedLockOptions,
    sentAt: number,
  ): LockHold | number {
    if (!reply.granted) return reply.ttl;
    const { leaseTime, watchdog } = opts;
    const hold = new LockHold(target, owner, leaseTime, watchdog, reply.fencingToken, sentAt);
    hold.syncReplicas = opts.syncReplicas;
    hold.holdAtLeast = opts.holdAtLeast;
    hold.maxHold = opts.maxHold;
    hold.grantedAt = now();
    const closing = this.driver.closing();
    if (closing) {
      // close() began while the store granted it: nobody will release it later, so free it now.
      void this.drop(hold);
      throw closing;
    }
    // Read too late to be of use (a stalled event loop): freed and counted as busy (its release
    // goes out ahead of the caller's next attempt).
    if (now() >= hold.handOverBy) {
      void this.drop(hold);
      return 0;
    }
    this.holds.add(hold);
    return hold;
  }

  /** Frees an entry's hold in the store; rejects with LockLostError when it had been lost. */
  release(hold: LockHold): Promise<void> {
    return boundedRelease<number | null>(hold, this.driver, {
      send: (answered, failed) => {
        this.waiters.releasing(hold);
        try {
          const fastPath = this.fastPath;
          if (fastPath !== undefined) fastPath.releaseInto(hold, answered, failed);
          else this.store.release(hold).then(answered, failed);
        } finally {
          this.holds.remove(hold);
        }
      },
      freed: (listeners) => {
        if (listeners === null) return false;
        this.waiters.released(hold, listeners);
        this.driver.observer?.released(hold.key, now() - hold.sentAt);
        return true;
      },
      failed: (error) => {
        // The lock stays until its lease ends (unrenewed) or a release retried here gets through.
        const retried = isConnectionError(error);
        if (retried) void this.cleanup(hold, hold.owner, now() + hold.leaseTime, () => false);
        this.driver.logger.warn(
          `Releasing lock "${hold.key}" failed (${messageOf(error)}); it will expire within ${hold.leaseTime} ms${retried ? ' unless a release gets through before' : ''}.`,
        );
      },
    });
  }

  /** Frees a hold nobody uses (abandoned, late, or at shutdown), quietly. */
  async drop(hold: LockHold): Promise<void> {
    this.holds.remove(hold);
    if (hold.released) return;
    hold.released = true;
    hold.trace?.released();
    this.waiters.releasing(hold);
    const listeners = await this.store.release(hold).catch(() => null);
    if (listeners !== null) this.waiters.released(hold, listeners);
  }

  /**
   * Frees what an attempt with a lost answer may have taken, retrying until `until`. While the
   * store is unreachable it tries again as soon as the store is back: the client may resend the
   * attempt then, taking the lock for nobody, and this release goes out right behind it, before
   * anything else this process sends.
   */
  private async cleanup(
    target: LockTarget,
    owner: string,
    until: number,
    superseded: () => boolean,
  ): Promise<void> {
    // Each release goes out on the connection ahead of any later attempt of the owner id; once
    // one was sent, a retry here could free what that attempt got.
    while (now() < until && !superseded()) {
      try {
        const listeners = await this.store.release({ ...target, owner });
        if (listeners !== null) this.waiters.released(target, listeners);
        return;
      } catch (error) {
        if (!isConnectionError(error)) return;
        const back = error instanceof StoreUnreachableError ? this.store.reachable?.() : undefined;
        await (back ? within(back, until - now()) : sleep(CLEANUP_RETRY_DELAY));
      }
    }
  }
}
