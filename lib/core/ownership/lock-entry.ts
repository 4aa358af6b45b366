import { LockNotHeldError } from '../../errors';
import type { LockHandle } from '../lock-handle';
import type { LockHold } from '../lock-hold';
import { kindOf, PLAIN_KIND, type HoldFamily } from '../kinds';
import type { LockMode } from '../options/lock-options';
import { WaitList } from '../waiting/wait-list';

/** Where an entry of a group's hold stands: its member key, and the group's shared release. */
export interface GroupMember {
  readonly key: string;
  /** The member's store name. */
  readonly name: string;
  /** Called as each member's outermost entry leaves; frees the group's hold with the last. */
  readonly left: (hold: LockHold) => Promise<void>;
}

/**
 * One level of a (re)entrant hold: the outermost entry owns the store hold, each nested entry
 * is a call beneath it that took the same lock again. An entry admits one nested entry at a
 * time, so concurrent siblings inside one locked call run one after the other. Nested enter
 * and exit never touch the store.
 */
export class LockEntry implements LockHandle {
  readonly depth: number;
  /** What the chain holds through this entry, for re-entry: its family and store name. */
  readonly family: HoldFamily;
  readonly name: string;
  readonly key: string;
  private nested: LockEntry | null = null;
  /**
   * Siblings waiting for the nested slot; each brings the innermost entry of its chain. Made
   * when the first one comes: most entries never have any.
   */
  private waiting: WaitList<LockEntry, LockEntry | undefined> | undefined;
  private whenIdle: (() => void) | undefined;
  private released = false;

  constructor(
    /** The store hold shared by every level. */
    readonly hold: LockHold,
    /** The innermost entry (of any key) of the call chain this entry was taken in. */
    readonly outer: LockEntry | undefined,
    /** The entry of the same lock this one is nested in; undefined for the outermost. */
    private readonly parent: LockEntry | undefined,
    /** Frees the store hold; called by the outermost entry's release. Tells whose entry this is. */
    readonly releaseHold: (hold: LockHold) => Promise<void>,
    /** For an entry of one member of a group's hold. */
    private readonly member: GroupMember | undefined = parent?.member,
  ) {
    this.depth = parent ? parent.depth + 1 : 1;
    this.family = member ? PLAIN_KIND.family : kindOf(hold.kind).family;
    this.name = member?.name ?? hold.name;
    this.key = member?.key ?? hold.key;
  }

  get keys(): readonly string[] {
    return [this.key];
  }

  get mode(): LockMode | undefined {
    return kindOf(this.hold.kind).mode;
  }

  get fair(): boolean {
    return kindOf(this.hold.kind).fair;
  }

  get signal(): AbortSignal {
    return this.hold.signal;
  }

  get fencingToken(): number | undefined {
    return this.hold.fencingToken;
  }

  /** False once release() was called. */
  get active(): boolean {
    return !this.released;
  }

  /**
   * A call beneath this entry takes the lock again. Immediate when no sibling is nested here,
   * else waits up to `waitTime` (null on timeout) or until `signal` aborts (rejects). Throws
   * (or rejects a waiting sibling with) the LockLostError once the lock is lost.
   */
  enter(
    outer: LockEntry | undefined,
    waitTime: number,
    signal: AbortSignal | undefined,
  ): LockEntry | null | Promise<LockEntry | null> {
    const lost = this.hold.lostError;
    if (lost) throw lost;
    if (this.nested === null) {
      this.nested = new LockEntry(this.hold, outer, this, this.releaseHold);
      return this.nested;
    }
    if (waitTime <= 0) return null;
    // A loss of the hold rejects waiting siblings at once (with the LockLostError).
    const ends = signal ? AbortSignal.any([signal, this.hold.signal]) : this.hold.signal;
    this.waiting ??= new WaitList<LockEntry, LockEntry | undefined>(() => this.idle());
    return this.waiting.add(outer, waitTime, ends);
  }

  /**
   * Leaves this level. Waits for calls nested beneath it to leave first, so an outer release
   * never frees the lock under a running inner call.
   */
  release(): Promise<void> {
    if (this.released) {
      return Promise.reject(new LockNotHeldError(this.key, 'this handle was already released.'));
    }
    this.released = true;
    if (this.nested !== null || this.siblingCount > 0) {
      return new Promise<void>((resolve) => (this.whenIdle = resolve)).then(() =>
        this.leaveLevel(),
      );
    }
    return this.leaveLevel();
  }

  async [Symbol.asyncDispose](): Promise<void> {
    if (!this.released) await this.release();
  }

  /** Frees the store hold (outermost entry) or hands the level back to the parent. */
  private leaveLevel(): Promise<void> {
    if (this.parent === undefined) {
      return this.member ? this.member.left(this.hold) : this.releaseHold(this.hold);
    }
    this.parent.leave(this);
    const lost = this.hold.lostError;
    return lost ? Promise.reject(lost) : Promise.resolve();
  }

  /** A nested entry left: the next sibling gets the slot (or every sibling the loss). */
  private leave(child: LockEntry): void {
    if (this.nested !== child) return;
    this.nested = null;
    const lost = this.hold.lostError;
    if (lost) {
      this.waiting?.failAll(lost);
      return;
    }
    const waiting = this.waiting;
    const next = waiting?.head();
    if (waiting === undefined || next === undefined) {
      this.idle();
      return;
    }
    this.nested = new LockEntry(this.hold, next.data, this, this.releaseHold);
    waiting.grant(next, this.nested);
  }

  private get siblingCount(): number {
    return this.waiting?.length ?? 0;
  }

  /** Wakes a release that waits for the nested slot and its queue to empty. */
  private idle(): void {
    if (this.nested !== null || this.siblingCount > 0 || this.whenIdle === undefined) return;
    const resolve = this.whenIdle;
    this.whenIdle = undefined;
    resolve();
  }
}
