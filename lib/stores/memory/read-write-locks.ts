import { now } from '../../time/clock';
import type { AcquireReply, AcquireRequest, LockTarget, StoredHold } from '../../store';
import { readWriteChannel } from './channels';
import type { HoldKindStore, Publish } from './hold-kind';
import { remaining, type LockTable, type ReadWriteLock } from './lock-table';

/** A granted read hold: other readers may come in too. */
const SHARED = { granted: true, fencingToken: undefined, shared: true } as const;

/**
 * One mode of read-write locks (read-acquire.lua, read-release.lua, write-acquire.lua,
 * write-release.lua, renew-all.lua). Readers share the lock, each with its own read lease (a
 * dead reader loses it while the others renew theirs); the lock's own lease covers the longest
 * read lease. A writer excludes everyone but itself: its owner may also read (a downgrade), never
 * the other way round; a downgraded write keeps its own lease end (a read lease does not
 * stretch it) and is over past it. A plain lock of the name refuses both modes, and they
 * refuse it.
 */
export class ReadWriteLocks implements HoldKindStore {
  constructor(
    private readonly mode: 'read' | 'write',
    private readonly table: LockTable,
    private readonly publish: Publish,
  ) {}

  acquire(request: AcquireRequest): AcquireReply {
    const { name, owner, leaseTime } = request;
    const entry = this.entry(name);
    if (entry === undefined) {
      const lock: ReadWriteLock = {
        type: 'rw',
        mode: this.mode,
        writer: this.mode === 'write' ? owner : undefined,
        readers: new Map(this.mode === 'read' ? [[owner, now() + leaseTime]] : []),
        expiresAt: 0,
        timer: undefined,
      };
      this.table.add(name, lock, leaseTime);
      return this.mode === 'read' ? SHARED : { granted: true, fencingToken: undefined };
    }
    if (
      entry.type === 'rw' &&
      this.mode === 'read' &&
      (entry.mode === 'read' || entry.writer === owner)
    ) {
      if (entry.mode === 'write') entry.writeEnds ??= entry.expiresAt; // a downgrade
      const until = now() + leaseTime;
      entry.readers.set(owner, until);
      this.table.leaseUntil(name, entry, Math.max(entry.expiresAt, until));
      return SHARED;
    }
    if (entry.type === 'rw' && this.mode === 'write' && entry.writer === owner) {
      this.table.lease(name, entry, leaseTime); // this same acquire sent again
      return { granted: true, fencingToken: undefined };
    }
    const ends = entry.type === 'rw' ? (entry.writeEnds ?? Infinity) : Infinity;
    return { granted: false, ttl: remaining(Math.min(entry.expiresAt, ends)) };
  }

  /**
   * Ends the owner's hold. Frees the lock when no live hold remains, telling its waiters (how
   * many); 0 when the lock stays held (live readers, or the owner's other mode).
   */
  release(hold: StoredHold): number | undefined {
    const { name, owner } = hold;
    const entry = this.held(name, owner);
    if (entry === undefined) return undefined;
    if (this.mode === 'write') {
      entry.writer = undefined;
      entry.writeEnds = undefined;
      entry.mode = 'read'; // readers left (a downgrade) come in; others waiting may too
      if (entry.readers.size === 0) this.table.delete(name, entry);
      return this.publish(readWriteChannel(name));
    }
    entry.readers.delete(owner);
    if (entry.mode === 'write') {
      // The write's lease is the lock's again.
      if (entry.writeEnds !== undefined) this.table.leaseUntil(name, entry, entry.writeEnds);
      entry.writeEnds = undefined;
      return 0;
    }
    const time = now();
    const longest = Math.max(0, ...entry.readers.values()) - time;
    if (longest > 0) {
      this.table.leaseUntil(name, entry, time + longest);
      return 0;
    }
    this.table.delete(name, entry); // only dead readers (if any) remain
    return this.publish(readWriteChannel(name));
  }

  renew(hold: StoredHold, leaseTime: number): boolean {
    const entry = this.held(hold.name, hold.owner);
    if (entry === undefined) return false;
    const until = now() + leaseTime;
    // A read lease past its end comes back while the reader's field is there (as in Redis).
    if (this.mode === 'read') entry.readers.set(hold.owner, until);
    else if (entry.writeEnds !== undefined) entry.writeEnds = until;
    this.table.leaseUntil(hold.name, entry, Math.max(entry.expiresAt, until));
    return true;
  }

  /** The lock's remaining lease while held in this mode, else null. */
  remainingTtl(target: LockTarget): number | null {
    const entry = this.entry(target.name);
    return entry?.type === 'rw' && entry.mode === this.mode ? remaining(entry.expiresAt) : null;
  }

  /** The read-write lock `name` if `owner` holds it in this mode (a dead reader's field too). */
  private held(name: string, owner: string): ReadWriteLock | undefined {
    const entry = this.entry(name);
    if (entry?.type !== 'rw') return undefined;
    const holds = this.mode === 'read' ? entry.readers.has(owner) : entry.writer === owner;
    return holds ? entry : undefined;
  }

  /**
   * The lock under `name`, after ending a downgraded write past its own lease: then the lock is
   * in read mode, or gone with no reader left (endWrite in the Redis scripts).
   */
  private entry(name: string) {
    const entry = this.table.get(name);
    if (entry?.type !== 'rw' || entry.writeEnds === undefined || entry.writeEnds > now()) {
      return entry;
    }
    entry.writer = undefined;
    entry.writeEnds = undefined;
    entry.mode = 'read';
    if (entry.readers.size > 0) return entry;
    this.table.delete(name, entry);
    return undefined;
  }
}
