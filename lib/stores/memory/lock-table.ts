import { now } from '../../time/clock';
import { MAX_TIMER_DELAY } from '../../time/time-limit';

/** What every lock under a name has: a lease (Redis' PTTL of the lock hash). */
interface Leased {
  /** Monotonic time (clock.ts) at which the lease ends; Infinity: no lease. */
  expiresAt: number;
  /** Deletes the lock when its lease ends (unref'd). */
  timer: NodeJS.Timeout | undefined;
}

/** A plain, fair or group-member lock: Redis' hash with one owner field (hold count 1). */
interface ExclusiveLock extends Leased {
  readonly type: 'exclusive';
  readonly owner: string;
}

/** A read-write lock: Redis' hash with a `mode` field, reader fields and a writer field. */
export interface ReadWriteLock extends Leased {
  readonly type: 'rw';
  mode: 'read' | 'write';
  /** The write holder (only in `write` mode). */
  writer: string | undefined;
  /**
   * A downgraded write's own lease end (its lease key in Redis): read leases raise the lock's
   * lease, not the write's. Undefined: the write's lease is the lock's.
   */
  writeEnds?: number;
  /**
   * Each reader's own read lease end (its lease key). A reader past it is dead but keeps its
   * field, as in Redis, until a release finds it dead or the lock's own lease ends.
   */
  readonly readers: Map<string, number>;
}

/** Whatever lives under a lock name: both kinds exclude each other (one hash in Redis). */
export type LockRow = ExclusiveLock | ReadWriteLock;

/**
 * The lock names of a MemoryLockStore (Redis' lock hashes): plain, fair, group-member and
 * read-write locks of one name share one row, so they exclude each other as in Redis.
 */
export class LockTable {
  private readonly rows = new Map<string, LockRow>();

  /** The lock under `name` if within its lease (a lapsed one is deleted first). */
  get(name: string): LockRow | undefined {
    const row = this.rows.get(name);
    if (row !== undefined && row.expiresAt <= now()) {
      this.delete(name, row);
      return undefined;
    }
    return row;
  }

  /** Puts `row` under the free `name`, with a lease of `leaseTime` ms. */
  add(name: string, row: LockRow, leaseTime: number): void {
    this.rows.set(name, row);
    this.leaseUntil(name, row, now() + leaseTime);
  }

  /** Sets the lock's lease to end `leaseTime` ms from now (Redis' PEXPIRE). */
  lease(name: string, row: LockRow, leaseTime: number): void {
    this.leaseUntil(name, row, now() + leaseTime);
  }

  /** Sets the lock's lease to end at `expiresAt` (clock ms). */
  leaseUntil(name: string, row: LockRow, expiresAt: number): void {
    row.expiresAt = expiresAt;
    clearTimeout(row.timer);
    row.timer = undefined;
    const delay = expiresAt - now();
    if (delay > MAX_TIMER_DELAY) return; // past a timer's reach: checked when the lock is read
    // An expired lock is deleted without a notice, as Redis expires a key without a message.
    row.timer = setTimeout(() => this.delete(name, row), Math.max(0, delay));
    row.timer.unref();
  }

  /** Deletes the lock (when it is still the one under `name`). */
  delete(name: string, row: LockRow): void {
    clearTimeout(row.timer);
    if (this.rows.get(name) === row) this.rows.delete(name);
  }
}

/** Ms until `expiresAt` (clock ms), at least 1 while it runs; Infinity for no lease. */
export function remaining(expiresAt: number): number {
  return expiresAt === Infinity ? Infinity : Math.max(1, Math.ceil(expiresAt - now()));
}
