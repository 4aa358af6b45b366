import { LockLostError, LockNotHeldError } from '../../errors';
import type { LockHandle } from '../lock-handle';
import type { Busy } from '../busy';
import { checkedOnRead } from '../../time/deadline-signal';
import { LockEntry } from './lock-entry';

/**
 * The one handle of a multi-lock: an entry per member key, chained in the call chain (members
 * the chain held already are nested entries of its outer holds; the others share one group
 * hold in the store). Its signal aborts when any member is lost; release() leaves every member.
 */
export class GroupHandle implements LockHandle {
  readonly keys: readonly string[];
  readonly key: string;
  readonly depth = 1;
  readonly mode = undefined;
  readonly fair = false;
  readonly fencingToken = undefined;
  private released = false;
  private aborted: AbortSignal | undefined;

  constructor(
    /** The member entries, in the order they were chained (the last is the innermost). */
    readonly members: readonly LockEntry[],
    /** The group's keys, duplicates removed, in the order the caller gave them. */
    keys: readonly string[],
  ) {
    this.keys = keys;
    this.key = keys.join(', ');
  }

  /** The innermost member entry: a chain run as this handle's owner holds every member. */
  get innermost(): LockEntry {
    return this.members[this.members.length - 1];
  }

  /** Aborts with the first member's loss; a read checks every member's lease deadline first. */
  get signal(): AbortSignal {
    if (this.aborted === undefined) {
      const holds = [...new Set(this.members.map((entry) => entry.hold))];
      const any = AbortSignal.any(holds.map((hold) => hold.signal));
      this.aborted = checkedOnRead(any, () => holds.forEach((hold) => hold.checkDeadline()));
    }
    return this.aborted;
  }

  /** Leaves every member (innermost first); rejects with the first LockLostError found. */
  async release(): Promise<void> {
    if (this.released) {
      throw new LockNotHeldError(this.key, 'this handle was already released.');
    }
    this.released = true;
    const results = await Promise.allSettled(
      [...this.members].reverse().map((entry) => entry.release()),
    );
    const failure = results.find((result) => result.status === 'rejected');
    if (!failure) return;
    const lost = results.find(
      (result) => result.status === 'rejected' && result.reason instanceof LockLostError,
    );
    throw ((lost ?? failure) as PromiseRejectedResult).reason;
  }

  async [Symbol.asyncDispose](): Promise<void> {
    if (!this.released) await this.release();
  }
}

/** Whether an enter() gave a handle (a lock's entry or a group's), not a busy answer. */
export function isHandle(entry: LockEntry | GroupHandle | Busy): entry is LockEntry | GroupHandle {
  return entry instanceof LockEntry || entry instanceof GroupHandle;
}
