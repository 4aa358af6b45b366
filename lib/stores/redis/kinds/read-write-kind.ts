import type { AcquireReply, AcquireRequest, LockTarget, StoredHold } from '../../../store';
import { readLeaseKey, rwChannelName } from '../redis-names';
import { READ_ACQUIRE, READ_RELEASE, WRITE_ACQUIRE, WRITE_RELEASE } from '../scripts/read-write';
import type { RenewEntry } from '../scripts/renew';
import { scriptCall, type PublishCommand, type ScriptCall } from '../scripts/script-definition';
import { hashTtl, ScriptKind } from './redis-kind';

/*
 * The two modes of a read-write lock (Redisson's RReadWriteLock): one hash with a 'mode' field,
 * one channel; each mode is a kind of hold with its own scripts and renew entry.
 */

/** What both modes share: the lock's hash and channel. */
abstract class ModeKind extends ScriptKind {
  /** The hash's 'mode' while held in this mode. */
  protected abstract readonly mode: string;

  /** The lock's remaining lease while held in this mode, else null. */
  override async remainingTtl(target: LockTarget): Promise<number | null> {
    const { client } = this.host;
    if ((await client.hget(target.name, 'mode')) !== this.mode) return null;
    return hashTtl(client, target.name);
  }

  channel(target: LockTarget): string {
    return rwChannelName(target.name);
  }
}

/**
 * Read holds (RReadWriteLock.readLock()): shared, each with its own lease key. A read inside the
 * chain's write reuses the write's owner id (a downgrade), so a late grant is not freed.
 */
export class ReadKind extends ModeKind {
  readonly requestDigit = '2';
  protected readonly mode = 'read';
  override readonly freeLateGrant = false;

  protected acquireCall(request: AcquireRequest): ScriptCall<AcquireReply> {
    return scriptCall(READ_ACQUIRE, request, 'publish');
  }

  protected releaseCall(
    hold: StoredHold,
    latch: string,
    publish: PublishCommand,
  ): ScriptCall<number | null> {
    return scriptCall(READ_RELEASE, hold, latch, publish);
  }

  /** 'r': the hash and the hold's lease key. */
  override renewEntries(hold: StoredHold, index: number, out: RenewEntry[]): void {
    const keys = [hold.name, readLeaseKey(hold.name, hold.owner)];
    out.push({ letter: 'r', keys, owner: hold.owner, hold: index });
  }
}

/** The write hold (RReadWriteLock.writeLock()): exclusive. */
export class WriteKind extends ModeKind {
  readonly requestDigit = '3';
  protected readonly mode = 'write';

  protected acquireCall(request: AcquireRequest): ScriptCall<AcquireReply> {
    return scriptCall(WRITE_ACQUIRE, request, 'publish');
  }

  protected releaseCall(
    hold: StoredHold,
    latch: string,
    publish: PublishCommand,
  ): ScriptCall<number | null> {
    return scriptCall(WRITE_RELEASE, hold, latch, publish);
  }

  /** 'w': the hash (its lease never lowered below a downgraded owner's read lease). */
  override renewEntries(hold: StoredHold, index: number, out: RenewEntry[]): void {
    out.push({ letter: 'w', keys: [hold.name], owner: hold.owner, hold: index });
  }
}
