import type { LockHold } from '../lock-hold';
import { isConnectionError } from '../../errors';
import { DeadlineTimer } from '../../time/time-limit';
import { ReleaseHoldBack } from './release-hold-back';
import { TurnPolicy } from './turn-policy';
import { WaitList, type WaitTicket } from './wait-list';

/**
 * One acquire attempt: the hold on success, else how long (ms) the holder's lease still runs
 * (Infinity for a lock without a lease).
 */
export type Attempt = () => Promise<LockHold | number>;

/** What a queue needs from the waiters that own it. */
export interface QueueHost {
  /** Start (or stop) receiving release notices of the lock. */
  subscribe(channel: string): Promise<void>;
  unsubscribe(channel: string): Promise<void>;
  /** A hold acquired for a waiter that had already left: release it. */
  abandoned(hold: LockHold): void;
  /** Subscribing or unsubscribing failed; waiting falls back to TTL-capped retries. */
  failed(error: unknown): void;
  /**
   * Announces a release on `channel` for the process due after this one (see KeyQueue.notice);
   * undefined where the store cannot, or the lock's waiters could misread it.
   */
  readonly passTurn?: (channel: string) => void;
  /** The queue was dropped (empty at its turn or for QUEUE_LINGER ms, or shut down). */
  dropped(queue: KeyQueue): void;
}

/** Delay before the head tries again after its attempt failed on the connection, ms. */
const CONNECTION_RETRY_DELAY = 100;
/**
 * How long a process that won the lock recently holds back its attempt after a release notice,
 * ms, per release it would be early (see TurnPolicy): far longer than the microseconds by which
 * Redis' delivery order favours one subscriber, short next to a handoff across processes.
 */
const HOLD_BACK_DELAY = 2;
/**
 * How long a queue stays subscribed after its last waiter left, ms: a caller that comes back
 * soon (a worker in a loop) finds the subscription and the turn-taking state still there. The
 * turn of a process that takes turns with others ends it sooner (see KeyQueue.notice).
 */
const QUEUE_LINGER = 1_000;

/**
 * The local queue of one lock's waiters behind one subscription to its release notices. Only
 * the head sends acquire attempts: one once subscribed, one per release notice, one when the
 * holder's lease runs out (a lost notice costs at most one lease). No polling. An attempt that
 * failed on the connection is repeated every CONNECTION_RETRY_DELAY ms within the head's wait;
 * one that Redis refused rejects the head, and the next waiter tries on its own. The turn passes
 * on at once (the next waiter tries without waiting for a notice) after a shared grant (a permit
 * or a read hold: others may be granted too, and a notice that came meanwhile may be for them)
 * and when the head leaves without its turn (its wait ran out, its signal aborted): the next
 * waiter may want what the head could not have (a read hold behind a write).
 */
export class KeyQueue {
  private readonly waiters: WaitList<LockHold, Attempt>;
  private readonly turns = new TurnPolicy();
  private subscribed = false;
  private subscribing = true;
  /** Attempts wait a moment after this process released the lock and others were told. */
  private readonly holdBack: ReleaseHoldBack;
  /** Pending while attempts wait for other processes' turns (set anew by each release notice). */
  private turnTimer: NodeJS.Timeout | undefined;
  private attempting = false;
  /** The waiter whose attempt was sent last, until it gets its turn or is failed. */
  private tried: WaitTicket<Attempt> | undefined;
  /** A notice or wake-up came while the head's attempt was in flight: try again at once. */
  private wakePending = false;
  private pendingByNotice = false;
  /** The attempt in flight answers a release notice. */
  private byNotice = false;
  /** The next attempt when no notice comes first (after a lease, a hold-back, an error). */
  private readonly retryTimer = new DeadlineTimer(() => this.attempt());
  private lingerTimer: NodeJS.Timeout | undefined;
  private disposed = false;

  constructor(
    /** The lock's name: the queue's id among its family's queues (see LockWaiters). */
    readonly id: string,
    /** The channel its release notices come on. */
    readonly channel: string,
    private readonly host: QueueHost,
    /** Retry delay when the holder's lock has no lease (a foreign lock). */
    private readonly noLeaseRetry: number,
    /** A hold-back (clock ms) begun before the queue existed; 0 for none. */
    holdBackUntil = 0,
  ) {
    this.holdBack = new ReleaseHoldBack(holdBackUntil);
    this.waiters = new WaitList(() => this.left());
    this.subscribe();
  }

  /** Queues a caller; resolves its hold, or null when `waitTime` passed; rejects on abort. */
  wait(
    attempt: Attempt,
    waitTime: number,
    signal: AbortSignal | undefined,
  ): Promise<LockHold | null> {
    const idle = this.waiters.length === 0 && !this.attempting && !this.subscribing;
    clearTimeout(this.lingerTimer);
    const waiting = this.waiters.add(attempt, waitTime, signal);
    if (this.waiters.length === 0)
      this.left(); // nothing queued: the signal had aborted
    else if (idle) this.attempt();
    return waiting;
  }

  /**
   * A release notice of the lock: the head tries now, or after a hold-back if it is not its
   * turn; with nobody waiting here, see idleNotice.
   */
  notice(): void {
    this.holdBack.noticed();
    const early = this.turns.noticed();
    clearTimeout(this.turnTimer);
    this.turnTimer = undefined;
    if (this.waiters.length === 0 && !this.attempting) {
      this.idleNotice(early);
      return;
    }
    if (early > 0) {
      // As many steps as releases early: the held-back processes try in the order of their turns.
      this.turnTimer = setTimeout(() => {
        this.turnTimer = undefined;
        this.attempt();
      }, early * HOLD_BACK_DELAY);
      this.turnTimer.unref();
    } else if (early === 0) {
      // Its turn: overdue clients of this process, whose notices came in the same read, go first.
      setImmediate(() => this.attempt(true));
    } else this.attempt(true);
  }

  /**
   * A notice while nobody here waits (the queue lingers). If others take turns with this
   * process, it leaves their rotation when its turn comes (or came): it passes the turn on
   * (where the store can: the others count that as its turn, and the one due next tries on it)
   * and stops listening, so it passes at most once and the next release no longer counts it.
   * Otherwise it lingers on (QUEUE_LINGER).
   */
  private idleNotice(early: number): void {
    if (!this.turns.rotating || early > 0) return;
    if (early === 0) this.host.passTurn?.(this.channel);
    this.dispose();
  }

  /** Whether release notices of the lock reach this queue (its subscription is in place). */
  get listening(): boolean {
    return this.subscribed;
  }

  /** This process is sending a release of the lock: the next notice, if subscribed, is its own. */
  releasing(): void {
    this.holdBack.releasing(this.subscribed);
  }

  /**
   * This process released the lock; `listeners` processes were told, and when `holdBackUntil`
   * (clock ms) is given, other processes among them: local attempts wait until then.
   */
  released(listeners: number, holdBackUntil?: number): void {
    this.turns.released(listeners);
    if (holdBackUntil !== undefined) this.holdBack.hold(holdBackUntil);
    // Without a subscription no notice will come: local waiters try now.
    if (!this.subscribed) this.attempt();
  }

  /** The notice connection is back: notices may have been missed, or a SUBSCRIBE may have failed. */
  reconnected(): void {
    this.holdBack.reset();
    if (this.subscribed) this.attempt();
    // Also when a SUBSCRIBE is pending: the break may have swallowed it (SUBSCRIBE is idempotent).
    else this.subscribe();
  }

  /** Rejects every waiter (shutdown) and drops the queue. */
  close(reason: unknown): void {
    this.tried = undefined; // the departures below pass no turn on
    this.waiters.failAll(reason);
    this.dispose();
  }

  private subscribe(): void {
    this.subscribing = true;
    this.host.subscribe(this.channel).then(
      () => {
        this.subscribing = false;
        this.subscribed = true;
        // A release may have been announced before the subscription took effect: try now.
        this.attempt();
      },
      (error: unknown) => {
        this.subscribing = false;
        this.host.failed(error);
        this.attempt();
      },
    );
  }

  private attempt(byNotice = false): void {
    if (this.disposed) return;
    if (this.attempting) {
      this.wakePending = true;
      this.pendingByNotice ||= byNotice;
      return;
    }
    const head = this.waiters.head();
    // Others' turns first: the turn timer tries when they are over.
    if (head === undefined || this.turnTimer !== undefined) return;
    // Held back after this process's own release: notices and wake-ups meanwhile try at its end.
    const holdBack = this.holdBack.remaining();
    if (holdBack > 0) {
      this.retryAfter(holdBack);
      return;
    }
    this.retryTimer.cancel();
    this.attempting = true;
    this.wakePending = false;
    this.pendingByNotice = false;
    this.byNotice = byNotice;
    this.tried = head;
    head.data().then(
      (result) => this.settle(head, result),
      (error: unknown) => this.refused(head, error),
    );
  }

  private settle(head: WaitTicket<Attempt>, result: LockHold | number): void {
    this.attempting = false;
    if (typeof result !== 'number') {
      this.turns.won();
      // A turn timer set before this win would only send an attempt bound to fail.
      clearTimeout(this.turnTimer);
      this.turnTimer = undefined;
      this.tried = undefined;
      if (!this.waiters.grant(head, result)) this.host.abandoned(result);
      if (this.disposed) return;
      // A shared grant (a permit, a read hold): the next waiter tries now. It may be granted too,
      // or learns when its own turn can come (the earliest expiry that frees its limit), and a
      // notice that came during this attempt may have been for it.
      if (result.shared) this.attempt();
      // Exclusive: a notice that came meanwhile was of the release this grant followed. The next
      // waiter waits for this hold's release notice, capped by its lease.
      else this.retryAfter(result.leaseTime);
      return;
    }
    // The lock was free after a release notice, yet someone else got it: others compete.
    if (this.byNotice) this.turns.lostRace();
    // A notice came meanwhile, or the head left: the next waiter's kind may be granted now.
    if (this.wakePending || head.done) this.attempt(this.pendingByNotice);
    // PTTL is truncated to the ms: one more, so the retry does not arrive just before the expiry.
    else this.retryAfter(result === Infinity ? this.noLeaseRetry : result + 1);
  }

  private refused(head: WaitTicket<Attempt>, error: unknown): void {
    this.attempting = false;
    if (isConnectionError(error)) {
      // Redis may be back soon: the head keeps its place and its wait bounds the retries.
      this.retryAfter(CONNECTION_RETRY_DELAY);
      return;
    }
    // Redis answered with an error: the head gets it, the next waiter tries on its own.
    this.tried = undefined;
    this.waiters.fail(head, error);
    this.attempt();
  }

  private retryAfter(delay: number): void {
    if (this.waiters.length === 0 || this.attempting) return;
    // Never early: an attempt sent before the holder's lease ends only meets it again.
    this.retryTimer.start(delay);
  }

  /**
   * After each departure: when the waiter that tried last left between its attempts, the next
   * one tries now; an empty queue lingers, then is dropped.
   */
  private left(): void {
    if (this.disposed) return;
    if (this.waiters.length > 0) {
      if (this.tried?.done && !this.attempting) this.attempt();
      return;
    }
    this.retryTimer.cancel();
    clearTimeout(this.lingerTimer);
    this.lingerTimer = setTimeout(() => this.dispose(), QUEUE_LINGER);
    this.lingerTimer.unref();
  }

  private dispose(): void {
    if (this.waiters.length > 0 || this.disposed) return;
    this.disposed = true;
    clearTimeout(this.lingerTimer);
    this.retryTimer.cancel();
    clearTimeout(this.turnTimer);
    this.host.dropped(this);
    this.host.unsubscribe(this.channel).catch((error: unknown) => this.host.failed(error));
  }
}
