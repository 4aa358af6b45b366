import { now } from '../../../time/clock';
import {
  GRANTED,
  type AcquireReply,
  type AcquireRequest,
  type LockTarget,
  type StoredHold,
} from '../../../store';
import { readWriteChannel } from '../channels';
import { remaining, type ReadWriteLock } from '../lock-table';
import { LockKind, type MemoryKindHost } from './memory-kind';

/**
 * One mode of read-write locks (read-acquire.lua, read-release.lua, write-acquire.lua,
 * write-release.lua, renew-all.lua). Readers share the lock, each with its own read lease (a
 * dead reader loses it while the others renew theirs); the lock's own lease covers the longest
 * read lease. A writer excludes everyone but itself: its owner may also read (a downgrade), never
 * the other way round; a downgraded write keeps its own lease end (a read lease does not
 * stretch it) and is over past it. A plain lock of the name refuses both modes, and they
 * refuse it.
 */
export class ReadWriteKind extends LockKind {
  constructor(
    /** The kind: the read or the write hold. */
    private readonly mode: 'read' | 'write',
    host: MemoryKindHost,
  ) {
    super(host);
  }

  acquire(request: AcquireRequest): AcquireReply {
    const { name, owner, leaseTime } = request;
    const row = this.row(name);
    if (row === undefined) {
      const lock: ReadWriteLock = {
        type: 'rw',
        mode: this.mode,
        writer: this.mode === 'write' ? owner : undefined,
        readers: new Map(this.mode === 'read' ? [[owner, now() + leaseTime]] : []),
        expiresAt: 0,
        timer: undefined,
      };
      this.host.table.add(name, lock, leaseTime);
      return GRANTED;
    }
    if (
      row.type === 'rw' &&
      this.mode === 'read' &&
      (row.mode === 'read' || row.writer === owner)
    ) {
      if (row.mode === 'write') row.writeEnds ??= row.expiresAt; // a downgrade
      const until = now() + leaseTime;
      row.readers.set(owner, until);
      this.host.table.leaseUntil(name, row, Math.max(row.expiresAt, until));
      return GRANTED;
    }
    if (row.type === 'rw' && this.mode === 'write' && row.writer === owner) {
      this.host.table.lease(name, row, leaseTime); // this same acquire sent again
      return GRANTED;
    }
    const ends = row.type === 'rw' ? (row.writeEnds ?? Infinity) : Infinity;
    return { granted: false, ttl: remaining(Math.min(row.expiresAt, ends)) };
  }

  /**
   * Ends the owner's hold. Frees the lock when no live hold remains, telling its waiters (how
   * many); 0 when the lock stays held (live readers, or the owner's other mode).
   */
  release(hold: StoredHold): number | undefined {
    const { name, owner } = hold;
    const row = this.held(name, owner);
    if (row === undefined) return undefined;
    if (this.mode === 'write') {
      row.writer = undefined;
      row.writeEnds = undefined;
      row.mode = 'read'; // readers left (a downgrade) come in; others waiting may too
      if (row.readers.size === 0) this.host.table.delete(name, row);
      return this.host.publish(readWriteChannel(name));
    }
    row.readers.delete(owner);
    if (row.mode === 'write') {
      // The write's lease is the lock's again.
      if (row.writeEnds !== undefined) this.host.table.leaseUntil(name, row, row.writeEnds);
      row.writeEnds = undefined;
      return 0;
    }
    const time = now();
    const longest = Math.max(0, ...row.readers.values()) - time;
    if (longest > 0) {
      this.host.table.leaseUntil(name, row, time + longest);
      return 0;
    }
    this.host.table.delete(name, row); // only dead readers (if any) remain
    return this.host.publish(readWriteChannel(name));
  }

  renew(hold: StoredHold, leaseTime: number): boolean {
    const row = this.held(hold.name, hold.owner);
    if (row === undefined) return false;
    const until = now() + leaseTime;
    // A read lease past its end comes back while the reader's field is there (as in Redis).
    if (this.mode === 'read') row.readers.set(hold.owner, until);
    else if (row.writeEnds !== undefined) row.writeEnds = until;
    this.host.table.leaseUntil(hold.name, row, Math.max(row.expiresAt, until));
    return true;
  }

  /** The lock's remaining lease while held in this mode, else null. */
  remainingTtl(target: LockTarget): number | null {
    const row = this.row(target.name);
    return row?.type === 'rw' && row.mode === this.mode ? remaining(row.expiresAt) : null;
  }

  /** Releases of the lock, in either mode. */
  channel(target: LockTarget): string {
    return readWriteChannel(target.name);
  }

  /** The read-write lock `name` if `owner` holds it in this mode (a dead reader's field too). */
  private held(name: string, owner: string): ReadWriteLock | undefined {
    const row = this.row(name);
    if (row?.type !== 'rw') return undefined;
    const holds = this.mode === 'read' ? row.readers.has(owner) : row.writer === owner;
    return holds ? row : undefined;
  }

  /**
   * The lock under `name`, after ending a downgraded write past its own lease: then the lock is
   * in read mode, or gone with no reader left (endWrite in the Redis scripts).
   */
  private row(name: string) {
    const row = this.host.table.get(name);
    if (row?.type !== 'rw' || row.writeEnds === undefined || row.writeEnds > now()) {
      return row;
    }
    row.writer = undefined;
    row.writeEnds = undefined;
    row.mode = 'read';
    if (row.readers.size > 0) return row;
    this.host.table.delete(name, row);
    return undefined;
  }
}
