import { LockError, messageOf } from '../../errors';
import type { LockHandle } from '../lock-handle';

/** What a campaign tells its listeners: leading (with the term), or not. */
export interface LeaderChange {
  readonly leader: boolean;
  /** The term's fencing token while leading (with `fencing`); absent when not leading. */
  readonly term?: number;
}

/** Called on every change of a campaign's leadership. */
export type LeaderListener = (change: LeaderChange) => void;

/** What a campaign needs from the engine (see campaignDriver). */
export interface CampaignDriver {
  /** The lock key, as given. */
  readonly key: string;
  /** The leader lock's lease, ms. */
  readonly leaseTime: number;
  /** Takes the leader lock, waiting as long as it takes, until `signal` aborts (rejects). */
  take(signal: AbortSignal): Promise<LockHandle>;
  /** Ends a term on purpose: aborts `held`'s signal for `reason`, not reported as a loss. */
  end(held: LockHandle, reason: string): void;
  /** Whether the engine is shutting down: the campaign then ends. */
  stopped(): boolean;
  /** Runs `fn` outside every call chain (the campaign's loop and timers carry none). */
  outside<T>(fn: () => T): T;
  readonly logger: { warn(message: string): void; debug(message: string): void };
}

/** The first retry delay after a failed campaign attempt, ms; doubled per failure up to the lease. */
const FIRST_RETRY = 100;
/** The longest a resigning leader stands down before it campaigns again, ms. */
export const MAX_STAND_DOWN = 1_000;

/** One term: the leader lock's handle, whether it was announced, and the release that ends it. */
interface Term {
  readonly held: LockHandle;
  announced: boolean;
  ended: Promise<void> | undefined;
}

/**
 * Campaigns for the leadership of one name, on the lock of that name: the campaign waits for the
 * lock (woken by its release notices), leads while it holds it (the watchdog renews it) and
 * campaigns again when the term ends, until closed. A term ends when the lock is lost (its lease
 * ran out unrenewed, Redis lost it), on `resign()` and on `close()`. `isLeader`, `term` and
 * `signal` read the local lease deadline (monotonic clock) on every read, so after a stall
 * longer than the lease the first read already finds the term over. A failed attempt (the store
 * unreachable, a script refused) is retried with a doubling delay up to the lease; the campaign
 * ends itself when the engine shuts down. Nest-free: listeners through `onChange` (the Nest
 * layer's Leadership adds `changes$`).
 */
export class LeaderCampaign {
  private current: Term | undefined;
  private readonly listeners = new Set<LeaderListener>();
  private readonly stopping = new AbortController();
  private readonly electedWaiters = new Set<{
    resolve: () => void;
    reject: (error: Error) => void;
  }>();
  private running: Promise<void> | undefined;
  private closing: Promise<void> | undefined;
  private resigned = false;
  /** The signal read while not leading: aborted. */
  private readonly notLeading: AbortSignal;

  constructor(private readonly driver: CampaignDriver) {
    this.notLeading = AbortSignal.abort(new LockError(`Not the leader of "${driver.key}".`));
  }

  /** The name campaigned for (the lock key, without `keyPrefix`). */
  get key(): string {
    return this.driver.key;
  }

  /** Whether this instance leads now: holds the leader lock, its lease deadline not passed. */
  get isLeader(): boolean {
    // Reading `aborted` checks the deadline first; a passed one ends the term right here.
    return this.current !== undefined && !this.current.held.signal.aborted;
  }

  /** The current term's fencing token while leading (with `fencing`), else undefined. */
  get term(): number | undefined {
    return this.isLeader ? this.current?.held.fencingToken : undefined;
  }

  /**
   * The current term's signal: aborted (a LockLostError as its reason) when the term ends, for
   * whatever cause. Not leading: an aborted signal.
   */
  get signal(): AbortSignal {
    return this.isLeader ? this.current!.held.signal : this.notLeading;
  }

  /** The leader lock's handle while leading, else undefined. */
  get handle(): LockHandle | undefined {
    return this.isLeader ? this.current?.held : undefined;
  }

  /** Whether close() was called. */
  get closed(): boolean {
    return this.stopping.signal.aborted;
  }

  /** Calls `listener` on every change (elected, term ended); returns the unsubscribe. */
  onChange(listener: LeaderListener): () => void {
    this.listeners.add(listener);
    return () => void this.listeners.delete(listener);
  }

  /** Resolves when this instance leads (at once if it does); rejects if closed first. */
  whenLeader(): Promise<void> {
    if (this.isLeader) return Promise.resolve();
    if (this.closed) return Promise.reject(this.closedError());
    return new Promise<void>((resolve, reject) => this.electedWaiters.add({ resolve, reject }));
  }

  /** Starts campaigning (once; not after close). */
  start(): void {
    if (this.running !== undefined || this.closed) return;
    this.running = this.driver.outside(() => this.campaign());
  }

  /**
   * Gives the current term up: its signal aborts, the lock is freed (resolves once freed), and
   * this instance stands down (a third of the lease, at most MAX_STAND_DOWN ms) before it
   * campaigns again, so another candidate takes over. Not leading: resolves at once.
   */
  async resign(): Promise<void> {
    const term = this.current;
    if (term === undefined || !this.isLeader) return;
    this.resigned = true;
    this.driver.end(term.held, 'this instance resigned the leadership');
    await term.ended;
  }

  /** Stops campaigning: ends the term if leading (the lock is freed), rejects whenLeader(). */
  close(): Promise<void> {
    this.closing ??= this.shutdown();
    return this.closing;
  }

  private async shutdown(): Promise<void> {
    this.stopping.abort(this.closedError());
    for (const waiter of this.electedWaiters) waiter.reject(this.closedError());
    this.electedWaiters.clear();
    const term = this.current;
    if (term !== undefined) this.driver.end(term.held, 'its leadership was closed');
    await term?.ended;
    await this.running;
  }

  private async campaign(): Promise<void> {
    const signal = this.stopping.signal;
    let failures = 0;
    while (!signal.aborted) {
      let held: LockHandle;
      try {
        held = await this.driver.take(signal);
      } catch (error) {
        if (signal.aborted) return;
        if (this.driver.stopped()) {
          void this.close(); // waits for this loop, which ends here
          return;
        }
        const delay = Math.min(FIRST_RETRY * 2 ** failures++, this.driver.leaseTime);
        const message = `Campaign for the leadership of "${this.key}" failed (${messageOf(error)}); retrying in ${delay} ms.`;
        if (failures === 1) this.driver.logger.warn(message);
        else this.driver.logger.debug(message);
        await pause(delay, signal);
        continue;
      }
      failures = 0;
      await this.serve(held);
      if (this.resigned) {
        this.resigned = false;
        await pause(Math.min(this.driver.leaseTime / 3, MAX_STAND_DOWN), signal);
      }
    }
  }

  /** Leads with `held` until its signal aborts (lost, resigned, closed); resolves once freed. */
  private serve(held: LockHandle): Promise<void> {
    const term: Term = { held, announced: false, ended: undefined };
    return new Promise<void>((resolve) => {
      const end = () => {
        if (this.current === term) this.current = undefined;
        term.ended = held.release().then(
          () => undefined,
          () => undefined, // a lost term's release rejects with the loss, already told
        );
        if (term.announced) this.emit({ leader: false });
        void term.ended.then(resolve);
      };
      if (this.closed) {
        this.driver.end(held, 'its leadership was closed');
        term.ended = held.release().catch(() => undefined);
        void term.ended.then(resolve);
        return;
      }
      this.current = term;
      held.signal.addEventListener('abort', end, { once: true });
      // Read past its deadline: the read aborts it and `end` runs; lost before: no event.
      if (held.signal.aborted) {
        if (term.ended === undefined) end();
        return;
      }
      term.announced = true;
      this.emit({ leader: true, term: held.fencingToken });
      for (const waiter of this.electedWaiters) waiter.resolve();
      this.electedWaiters.clear();
    });
  }

  private emit(change: LeaderChange): void {
    for (const listener of this.listeners) {
      try {
        listener(change);
      } catch (error) {
        this.driver.logger.warn(
          `A listener of the leadership of "${this.key}" threw: ${messageOf(error)}`,
        );
      }
    }
  }

  private closedError(): LockError {
    return new LockError(`The leadership of "${this.key}" was closed.`);
  }
}

/** Resolves after `ms`, or at once when `signal` aborts. */
function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise<void>((resolve) => {
    if (signal.aborted) return resolve();
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    timer.unref();
    signal.addEventListener('abort', done, { once: true });
  });
}
