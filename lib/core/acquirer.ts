import {
  isConnectionError,
  LockError,
  LockUpgradeError,
  StoreUnreachableError,
  type LockRedisError,
} from '../errors';
import { counted, unsynced, type Busy } from './busy';
import { now } from '../time/clock';
import type { HoldCalls } from './hold-calls';
import type { LockHold } from './lock-hold';
import type { LockObserver } from './lock-observer';
import type { LockTracer } from './lock-tracer';
import type { ResolvedLockOptions } from './options/lock-options';
import { LockEntry } from './ownership/lock-entry';
import type { OwnerContext } from './ownership/owner-context';
import type { LockStore, LockTarget } from '../store';
import { kindOf } from './kinds';
import { startTrace, traceWait } from './traced-wait';
import { takeFair } from './waiting/fair-wait';
import type { LockWaiters } from './waiting/lock-waiters';

/** What the acquirer needs from the engine. */
export interface AcquirerDriver {
  readonly store: LockStore;
  readonly context: OwnerContext;
  readonly calls: HoldCalls;
  readonly waiters: LockWaiters;
  readonly observer: LockObserver | undefined;
  /** Follows each outermost acquisition and its hold (spans); undefined: nothing traced. */
  readonly tracer: LockTracer | undefined;
  /** Place timeout of fair waiters, ms. */
  readonly fairQueueTimeout: number;
  /** Retry delay when the holder's lock has no lease (a foreign lock), ms. */
  readonly noLeaseRetry: number;
  /** Given to every entry: frees its hold, and marks the entry as the engine's. */
  readonly releaseHold: (hold: LockHold) => Promise<void>;
  /** The shutdown error once close() began. */
  closing(): LockError | undefined;
  /** Runs `fn` outside every call chain. */
  readonly outside: <T>(fn: () => T) => T;
}

/**
 * Takes holds for call chains: re-entry along the chain, then one attempt, then waiting (the
 * lock's local queue behind its release notices; a fair lock's own queue in the store). Each
 * kind's rules of re-entry are its descriptor's (kinds/): a read inside a write is a downgrade
 * (a read hold of the same owner), a write inside a read is refused (LockUpgradeError).
 * Multi-locks: GroupAcquirer.
 */
export class Acquirer {
  constructor(
    /** Also the GroupAcquirer's. */
    readonly driver: AcquirerDriver,
  ) {}

  /**
   * The entry, or when busy after the wait: when the holder's lease ends, if known. Not async:
   * an uncontended call costs the attempt's promise and one `then` (see take), no async frame.
   */
  enter(target: LockTarget, opts: ResolvedLockOptions): Promise<LockEntry | Busy> {
    try {
      const { context } = this.driver;
      opts.signal?.throwIfAborted();
      const kind = kindOf(target.kind);
      const held = context.find(kind.family, target.name);
      if (held) return this.reenter(held, opts);
      if (kind.refusedInside !== undefined && context.find(kind.refusedInside, target.name)) {
        throw new LockUpgradeError(target.key);
      }
      // A downgrade: the hold is taken with the owner id of the chain's other hold of the name.
      const owner =
        kind.ownerFrom === undefined
          ? undefined
          : context.find(kind.ownerFrom, target.name)?.hold.owner;
      const closing = this.driver.closing();
      if (closing) throw closing;
      const started = now();
      const busy: Busy = { leaseEnds: undefined, attempts: 0 };
      const entered = (hold: LockHold | null) => this.entered(target, hold, started, busy);
      const tracer = this.driver.tracer;
      if (tracer === undefined) return this.wait(target, opts, started, busy, owner, entered);
      return traceWait(
        startTrace(tracer, target, opts.waitTime),
        busy,
        () => this.wait(target, opts, started, busy, owner, entered),
        (entry) => (entry instanceof LockEntry ? entry.hold : undefined),
      );
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /** The wait of an outermost entry (see enter): a fair lock's, or take's. */
  private wait(
    target: LockTarget,
    opts: ResolvedLockOptions,
    started: number,
    busy: Busy,
    owner: string | undefined,
    entered: (hold: LockHold | null) => LockEntry | Busy,
  ): Promise<LockEntry | Busy> {
    return kindOf(target.kind).fair
      ? this.fair(target, opts, busy).then(entered)
      : this.take(target, opts, started, busy, owner, entered);
  }

  /** A nested entry of a lock the chain holds (waiting for a sibling's nested call to end). */
  private async reenter(held: LockEntry, opts: ResolvedLockOptions): Promise<LockEntry | Busy> {
    const entry = await held.enter(this.driver.context.innermost(), opts.waitTime, opts.signal);
    return entry ?? { leaseEnds: undefined };
  }

  /**
   * One attempt, then (within the wait) the lock's local queue; `then` gets the hold (or null:
   * busy). Not async: the uncontended path (every lock call) costs the attempt's promise and
   * one `then`, no async frame of its own.
   */
  take<R>(
    target: LockTarget,
    opts: ResolvedLockOptions,
    started: number,
    busy: Busy,
    owner: string | undefined,
    then: (hold: LockHold | null) => R | Promise<R>,
  ): Promise<R> {
    const { calls, waiters, store } = this.driver;
    // Callers queued locally for this lock go first; only a no-wait try (or a downgrade, which
    // never waits for others) skips the queue. While the store is unreachable, a caller that may
    // wait does so in the queue, whose attempts are retried until the store is back (see
    // KeyQueue); a no-wait try fails at once.
    const down = opts.waitTime > 0 && owner === undefined ? store.unreachable?.() : undefined;
    if (down) busy.failure = new StoreUnreachableError(target.key, 'acquire', down);
    if (owner !== undefined || opts.waitTime <= 0 || (!waiters.has(target) && !down)) {
      let read = false; // the attempt was answered: what fails after is not the attempt's
      const answered = (result: LockHold | number): R | Promise<R> => {
        read = true;
        if (typeof result !== 'number') {
          const hold = this.granted(result, opts);
          return hold instanceof Promise ? hold.then(then) : then(hold);
        }
        busy.leaseEnds = now() + result; // Infinity: no lease
        if (opts.waitTime <= 0 || owner !== undefined) return then(null);
        return this.queue(target, opts, started, busy).then(then);
      };
      const extra = owner === undefined ? undefined : { owner };
      counted(busy);
      // Mapped in the step that reads the answer (see HoldCalls.attempt), but for a synced
      // attempt, whose failure to sync is read first.
      const attempted =
        opts.syncReplicas <= 0
          ? calls.attempt(target, opts, extra, answered)
          : calls
              .attempt(target, opts, extra)
              .catch((error: unknown) => unsynced(error, busy))
              .then(answered);
      if (opts.waitTime <= 0 || owner !== undefined) return attempted;
      // An attempt that got no answer (its connection broke): the caller waits in the queue,
      // whose attempts are retried until the connection is back, within the wait.
      return attempted.catch((error: unknown) => {
        if (read || !isConnectionError(error)) throw error;
        busy.failure = error as LockRedisError;
        return this.queue(target, opts, started, busy).then(then);
      });
    }
    return this.queue(target, opts, started, busy).then(then);
  }

  /** Waits in the lock's local queue for the rest of the wait that began at `started`. */
  private queue(
    target: LockTarget,
    opts: ResolvedLockOptions,
    started: number,
    busy: Busy,
  ): Promise<LockHold | null> {
    const closing = this.driver.closing();
    if (closing) throw closing;
    opts.signal?.throwIfAborted();
    const remaining = Math.max(0, opts.waitTime - (now() - started));
    const attempt = () => {
      counted(busy);
      return this.driver.calls.attempt(target, opts).then(
        (result) => {
          if (typeof result === 'number') {
            busy.leaseEnds = now() + result;
            busy.failure = undefined; // the store answered: busy
          }
          return result;
        },
        (error: unknown) => {
          if (isConnectionError(error)) busy.failure = error as LockRedisError;
          return unsynced(error, busy);
        },
      );
    };
    return this.driver.waiters.wait(target, attempt, remaining, opts.signal);
  }

  /** A fair lock (see takeFair); a grant to a caller that aborted meanwhile is freed. */
  private async fair(
    target: LockTarget,
    opts: ResolvedLockOptions,
    busy: Busy,
  ): Promise<LockHold | null> {
    const hold = await takeFair(this.driver, target, opts, busy);
    return hold && this.granted(hold, opts);
  }

  /** A hold granted to a caller whose signal aborted meanwhile is freed, and the abort thrown. */
  granted(hold: LockHold, opts: ResolvedLockOptions): LockHold | Promise<LockHold> {
    const signal = opts.signal;
    if (!signal?.aborted) return hold;
    return this.driver.calls.drop(hold).then(() => {
      signal.throwIfAborted();
      return hold;
    });
  }

  private entered(
    target: LockTarget,
    hold: LockHold | null,
    started: number,
    busy: Busy,
  ): LockEntry | Busy {
    const { observer, context } = this.driver;
    if (observer) {
      if (hold) observer.acquired(target.key, now() - started);
      else observer.busy(target.key, now() - started);
    }
    if (hold) return new LockEntry(hold, context.innermost(), undefined, this.driver.releaseHold);
    // Grants were undone for want of replica acknowledgements: say so, not "busy".
    if (busy.unsynced) throw busy.unsynced;
    // The wait ended while the store could not be reached, or its last try got no answer:
    // that, not "busy", is why.
    const down = this.driver.store.unreachable?.();
    if (down) throw new StoreUnreachableError(target.key, 'acquire', down);
    if (busy.failure) throw busy.failure;
    return busy;
  }
}
