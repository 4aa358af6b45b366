import { counted, unsynced, type Busy } from './busy';
import { now } from '../time/clock';
import type { Acquirer, AcquirerDriver } from './acquirer';
import type { LockHold } from './lock-hold';
import type { WaitTrace } from './lock-tracer';
import type { ResolvedLockOptions } from './options/lock-options';
import { GroupHandle } from './ownership/group-handle';
import { LockEntry } from './ownership/lock-entry';
import type { LockTarget } from '../store';
import { kindOf, MULTI_KIND, PLAIN_KIND } from './kinds';
import { targetKeys, type GroupTarget } from './targets';
import { startTrace, traceWait } from './traced-wait';

/** A group attempt refused by a member other than the one its queue waits for. */
class MovedToMember extends Error {
  constructor(readonly member: number) {
    super('busy member changed');
  }
}

/**
 * Takes multi-locks for call chains: the members the chain holds are re-entered (in one order,
 * by name), the others taken together in one attempt; while one is busy, the group waits in
 * that member's local queue. A member left alone is taken as a plain lock (see Acquirer).
 */
export class GroupAcquirer {
  private readonly driver: AcquirerDriver;

  /** `single`: takes plain locks (a lone missing member) and frees grants to aborted callers. */
  constructor(private readonly single: Acquirer) {
    this.driver = single.driver;
  }

  /** A multi-lock: members the chain holds are re-entered, the others taken together. */
  async enter(target: LockTarget, opts: ResolvedLockOptions): Promise<GroupHandle | Busy> {
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
        const held = context.find(PLAIN_KIND.family, names[i]);
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
          ? { kind: PLAIN_KIND.id, key: keys[missing[0]], name: names[missing[0]] }
          : {
              kind: MULTI_KIND.id,
              key: missing.map((i) => keys[i]).join(', '),
              name: names[missing[0]],
              names: missing.map((i) => names[i]),
              keys: missing.map((i) => keys[i]),
            };
      const left = { ...opts, waitTime: Math.max(0, opts.waitTime - (now() - started)) };
      const tracer = this.driver.tracer;
      // Traced as the call asked: its keys, its kind and its wait.
      const trace = tracer && startTrace(tracer, target, opts.waitTime);
      let entered: LockEntry[] | Busy;
      try {
        entered = await this.takeGroup(rest, left, outer, trace);
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

  /** The members a group still needs, as entries chained after `outer`; `trace` follows it. */
  private async takeGroup(
    rest: LockTarget,
    opts: ResolvedLockOptions,
    outer: LockEntry | undefined,
    trace: WaitTrace | undefined,
  ): Promise<LockEntry[] | Busy> {
    const keys = targetKeys(rest);
    const started = now();
    const busy: Busy = { leaseEnds: undefined, attempts: 0 };
    const take = () =>
      kindOf(rest.kind).group
        ? this.takeAll(rest, opts, started, busy)
        : this.single.take(rest, opts, started, busy, undefined, (taken) => taken);
    const hold = await (trace === undefined
      ? take()
      : traceWait(trace, busy, take, (taken) => taken ?? undefined));
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
      const member = { key: keys[i], name, left };
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
    const attempt = () => {
      counted(busy);
      return this.driver.calls.attempt(target, opts, { refused }).then(
        (result) => {
          if (typeof result !== 'number') return result;
          busy.leaseEnds = now() + result;
          if (refusedBy !== member) throw new MovedToMember(refusedBy);
          return result;
        },
        (error: unknown) => unsynced(error, busy),
      );
    };
    counted(busy);
    const first = await this.driver.calls
      .attempt(target, opts, { refused })
      .catch((error: unknown) => unsynced(error, busy));
    if (typeof first !== 'number') return this.single.granted(first, opts);
    busy.leaseEnds = now() + first;
    member = refusedBy;
    for (;;) {
      const remaining = Math.max(0, opts.waitTime - (now() - started));
      if (remaining <= 0) return null;
      const queueTarget: LockTarget = { kind: PLAIN_KIND.id, key: target.key, name: names[member] };
      try {
        return await this.driver.waiters.wait(queueTarget, attempt, remaining, opts.signal);
      } catch (error) {
        if (!(error instanceof MovedToMember)) throw error;
        member = error.member;
      }
    }
  }

  /** Leaves the members a group had entered before it gave up. */
  private async leave(members: readonly LockEntry[]): Promise<void> {
    for (const entry of [...members].reverse()) await entry.release().catch(() => undefined);
  }
}
