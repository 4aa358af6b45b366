import { LockError, LockUpgradeError } from '../lock.errors';
import { unsynced, type Busy } from './busy';
import { now } from './clock';
import type { HoldCalls } from './hold-calls';
import type { LockHold } from './lock-hold';
import type { LockObserver } from './lock-observer';
import type { ResolvedLockOptions } from './options/lock-options';
import { GroupHandle } from './ownership/group-handle';
import { LockEntry } from './ownership/lock-entry';
import type { OwnerContext } from './ownership/owner-context';
import type { LockStore, LockTarget } from './store/lock-store';
import { holdId, targetKeys, type GroupTarget } from './targets';
import { takeFair } from './waiting/fair-wait';
import type { LockWaiters } from './waiting/lock-waiters';

/** What the acquirer needs from the engine. */
export interface AcquirerDriver {
  readonly store: LockStore;
  readonly context: OwnerContext;
  readonly calls: HoldCalls;
  readonly waiters: LockWaiters;
  readonly observer: LockObserver | undefined;
  /** Place timeout of fair waiters, ms. */
  readonly fairQueueTimeout: number;
  /** Retry delay when the holder's lock has no lease (a foreign lock), ms. */
  readonly noLeaseRetry: number;
  /** Given to every entry: frees its hold, and marks the entry as the engine's. */
  readonly releaseHold: (hold: LockHold) => Promise<void>;
  /** The shutdown error once close() began. */
  closing(): LockError | undefined;
}

/** A group attempt refused by a member other than the one its queue waits for. */
class MovedToMember extends Error {
  constructor(readonly member: number) {
    super('busy member changed');
  }
}

/**
 * Takes holds for call chains: re-entry along the chain, then one attempt, then waiting (the
 * lock's local queue behind its release notices; a fair lock's own queue in the store). Each
 * kind's rules of re-entry: a read inside a write is a downgrade (a read hold of the same owner),
 * a write inside a read is refused (LockUpgradeError); a group re-enters the members the chain
 * holds and takes the others together.
 */
export class Acquirer {
  constructor(private readonly driver: AcquirerDriver) {}

  /** The entry, or when busy after the wait: when the holder's lease ends, if known. */
  async enter(target: LockTarget, opts: ResolvedLockOptions): Promise<LockEntry | Busy> {
    const { context } = this.driver;
    opts.signal?.throwIfAborted();
    const held = context.find(holdId(target.kind, target.name));
    if (held) {
      const entry = await held.enter(context.innermost(), opts.waitTime, opts.signal);
      return entry ?? { leaseEnds: undefined };
    }
    let owner: string | undefined;
    if (target.kind === 'write' && context.find(holdId('read', target.name))) {
      throw new LockUpgradeError(target.key);
    }
    if (target.kind === 'read') owner = context.find(holdId('write', target.name))?.hold.owner;
    const closing = this.driver.closing();
    if (closing) throw closing;
    const started = now();
    const busy: Busy = { leaseEnds: undefined };
    const hold =
      target.kind === 'fair'
        ? await this.fair(target, opts, busy)
        : await this.take(target, opts, started, busy, owner);
    return this.entered(target, hold, started, busy);
  }

  /** A multi-lock: members the chain holds are re-entered, the others taken together. */
  async enterGroup(target: LockTarget, opts: ResolvedLockOptions): Promise<GroupHandle | Busy> {
    const { context } = this.driver;
    opts.signal?.throwIfAborted();
    const names = target.names ?? [target.name];
    const keys = targetKeys(target);
    const members: LockEntry[] = [];
    const missing: number[] = [];
    let outer = context.innermost();
    const started = now();
    // Held members are re-entered in one order (by name), so that siblings of one chain taking
    // the same members in other orders never wait for each other's nested slots in a cycle.
    const order = names.map((_, i) => i).sort((i, j) => (names[i] < names[j] ? -1 : 1));
    try {
      for (const i of order) {
        const held = context.find(holdId('lock', names[i]));
        if (!held) {
          missing.push(i);
          continue;
        }
        const left = Math.max(0, opts.waitTime - (now() - started));
        const entry = await held.enter(outer, left, opts.signal);
        if (!entry) {
          await this.leave(members);
          return { leaseEnds: undefined };
        }
        members.push(entry);
        outer = entry;
      }
    } catch (error) {
      await this.leave(members);
      throw error;
    }
    missing.sort((i, j) => i - j);
    if (missing.length > 0) {
      const rest: LockTarget | GroupTarget =
        missing.length === 1
          ? { kind: 'lock', key: keys[missing[0]], name: names[missing[0]] }
          : {
              kind: 'multi',
              key: missing.map((i) => keys[i]).join(', '),
              name: names[missing[0]],
              names: missing.map((i) => names[i]),
              keys: missing.map((i) => keys[i]),
            };
      const left = { ...opts, waitTime: Math.max(0, opts.waitTime - (now() - started)) };
      let entered: LockEntry[] | Busy;
      try {
        entered = await this.takeGroup(rest, left, outer);
      } catch (error) {
        await this.leave(members);
        throw error;
      }
      if (!Array.isArray(entered)) {
        await this.leave(members);
        return entered;
      }
      members.push(...entered);
    }
    return new GroupHandle(members, keys);
  }

  /** The members a group still needs, as entries chained after `outer`. */
  private async takeGroup(
    rest: LockTarget,
    opts: ResolvedLockOptions,
    outer: LockEntry | undefined,
  ): Promise<LockEntry[] | Busy> {
    const keys = targetKeys(rest);
    const started = now();
    const busy: Busy = { leaseEnds: undefined };
    const hold =
      rest.kind === 'lock'
        ? await this.take(rest, opts, started, busy, undefined)
        : await this.takeAll(rest, opts, started, busy);
    const observer = this.driver.observer;
    if (hold) observer?.acquired(rest.key, now() - started);
    else observer?.busy(rest.key, now() - started);
    if (!hold) {
      if (busy.unsynced) throw busy.unsynced;
      return busy;
    }
    const names = hold.names ?? [hold.name];
    let remaining = names.length;
    const left = (held: LockHold) =>
      --remaining === 0 ? this.driver.releaseHold(held) : Promise.resolve();
    const entries: LockEntry[] = [];
    names.forEach((name, i) => {
      const member = { key: keys[i], id: holdId('lock', name), left };
      const entry = new LockEntry(hold, outer, undefined, this.driver.releaseHold, member);
      entries.push(entry);
      outer = entry;
    });
    return entries;
  }

  /** Several locks in one attempt; while busy, waits in the busy member's queue. */
  private async takeAll(
    target: LockTarget,
    opts: ResolvedLockOptions,
    started: number,
    busy: Busy,
  ): Promise<LockHold | null> {
    const names = target.names!;
    let member = 0;
    let refusedBy = 0;
    const refused = (reply: { busy?: number }) => (refusedBy = reply.busy ?? 0);
    const attempt = () =>
      this.driver.calls.attempt(target, opts, { refused }).then(
        (result) => {
          if (typeof result !== 'number') return result;
          busy.leaseEnds = now() + result;
          if (refusedBy !== member) throw new MovedToMember(refusedBy);
          return result;
        },
        (error: unknown) => unsynced(error, busy),
      );
    const first = await this.driver.calls
      .attempt(target, opts, { refused })
      .catch((error: unknown) => unsynced(error, busy));
    if (typeof first !== 'number') return this.granted(first, opts);
    busy.leaseEnds = now() + first;
    member = refusedBy;
    for (;;) {
      const remaining = Math.max(0, opts.waitTime - (now() - started));
      if (remaining <= 0) return null;
      const queueTarget: LockTarget = { kind: 'lock', key: target.key, name: names[member] };
      try {
        return await this.driver.waiters.wait(queueTarget, attempt, remaining, opts.signal);
      } catch (error) {
        if (!(error instanceof MovedToMember)) throw error;
        member = error.member;
      }
    }
  }

  /**
   * One attempt, then (within the wait) the lock's local queue. Not async: the uncontended path
   * (every lock call) costs the attempt's promise and one `then`, no async frame of its own.
   */
  private take(
    target: LockTarget,
    opts: ResolvedLockOptions,
    started: number,
    busy: Busy,
    owner: string | undefined,
  ): Promise<LockHold | null> {
    const { calls, waiters } = this.driver;
    // Callers queued locally for this lock go first; only a no-wait try (or a downgrade, which
    // never waits for others) skips the queue.
    if (owner !== undefined || opts.waitTime <= 0 || !waiters.has(target)) {
      const first = calls.attempt(target, opts, owner === undefined ? undefined : { owner });
      const answered =
        opts.syncReplicas > 0 ? first.catch((error: unknown) => unsynced(error, busy)) : first;
      return answered.then((result) => {
        if (typeof result !== 'number') return this.granted(result, opts);
        busy.leaseEnds = now() + result; // Infinity: no lease
        if (opts.waitTime <= 0 || owner !== undefined) return null;
        return this.queue(target, opts, started, busy);
      });
    }
    return this.queue(target, opts, started, busy);
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
    const attempt = () =>
      this.driver.calls.attempt(target, opts).then(
        (result) => {
          if (typeof result === 'number') busy.leaseEnds = now() + result;
          return result;
        },
        (error: unknown) => unsynced(error, busy),
      );
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
  private granted(hold: LockHold, opts: ResolvedLockOptions): LockHold | Promise<LockHold> {
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
    return busy;
  }

  /** Leaves the members a group had entered before it gave up. */
  private async leave(members: readonly LockEntry[]): Promise<void> {
    for (const entry of [...members].reverse()) await entry.release().catch(() => undefined);
  }
}
