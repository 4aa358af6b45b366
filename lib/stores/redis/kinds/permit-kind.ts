import type { AcquireReply, AcquireRequest, LockTarget, StoredHold } from '../../../store';
import { permitsName, semaphoreChannelName } from '../redis-names';
import {
  SEMAPHORE_ACQUIRE,
  SEMAPHORE_AVAILABLE,
  SEMAPHORE_FORCE_UNLOCK,
  SEMAPHORE_RELEASE,
} from '../scripts/permit';
import type { RenewEntry } from '../scripts/renew';
import { scriptCall, type PublishCommand, type ScriptCall } from '../scripts/script-definition';
import { ScriptKind } from './redis-kind';

/**
 * Leased permits of a semaphore (Redisson's RPermitExpirableSemaphore layout: a counter under
 * the name, a zset of permits by lease end): semaphore-*.lua. Another object than a lock of
 * the name (WRONGTYPE between them).
 */
export class PermitKind extends ScriptKind {
  readonly requestDigit = '5';

  protected acquireCall(request: AcquireRequest): ScriptCall<AcquireReply> {
    return scriptCall(SEMAPHORE_ACQUIRE, request, 'publish');
  }

  protected releaseCall(
    hold: StoredHold,
    latch: string,
    publish: PublishCommand,
  ): ScriptCall<number | null> {
    return scriptCall(SEMAPHORE_RELEASE, hold, latch, publish);
  }

  /** 'p': the permits zset (semaphore-renew.lua). */
  override renewEntries(hold: StoredHold, index: number, out: RenewEntry[]): void {
    out.push({ letter: 'p', keys: [permitsName(hold.name)], owner: hold.owner, hold: index });
  }

  /** Revokes every permit (semaphore-force-unlock.lua). */
  override async forceUnlock(target: LockTarget): Promise<boolean> {
    const publish = await this.host.publish();
    const call = scriptCall(SEMAPHORE_FORCE_UNLOCK, target, publish);
    const [reply] = await this.host.run(call, 0);
    return call.decode(reply);
  }

  /** PermitCountPort: the permits a caller with the target's limit could take now. */
  async available(target: LockTarget): Promise<number> {
    const call = scriptCall(SEMAPHORE_AVAILABLE, target);
    const [reply] = await this.host.run(call, 0);
    return call.decode(reply);
  }

  channel(target: LockTarget): string {
    return semaphoreChannelName(target.name);
  }
}
