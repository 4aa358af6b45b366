import type { AcquireReply, AcquireRequest, LockTarget, StoredHold } from '../../../store';
import { channelName, unlockLatchKey } from '../redis-names';
import { failure } from '../replies';
import { ACQUIRE, ACQUIRE_FENCED, decodeAcquire, RELEASE, RELEASE_KEPT } from '../scripts/plain';
import {
  callLaid,
  decodeRelease,
  layoutBuffer,
  scriptCall,
  type PublishCommand,
  type ScriptCall,
} from '../scripts/script-definition';
import { ScriptKind, type DirectCalls } from './redis-kind';

/**
 * Plain reentrant locks (Redisson's RLock; with fencing, RFencedLock): acquire.lua (or
 * acquire-fenced.lua), release.lua, and release-kept.lua for `holdAtLeast`. The only kind with a fast path: every lock call takes it.
 */
export class PlainKind extends ScriptKind implements DirectCalls {
  readonly requestDigit = '0';
  override readonly direct: DirectCalls = this;
  readonly decodeAcquire = decodeAcquire;
  readonly decodeRelease = decodeRelease;

  protected acquireCall(request: AcquireRequest): ScriptCall<AcquireReply> {
    return scriptCall(request.fencing ? ACQUIRE_FENCED : ACQUIRE, request, 'publish');
  }

  protected releaseCall(
    hold: StoredHold,
    latch: string,
    publish: PublishCommand,
  ): ScriptCall<number | null> {
    return scriptCall(RELEASE, hold, latch, publish);
  }

  /** Unsynced: the fast path's one script call. */
  override acquire(request: AcquireRequest, replicas: number): Promise<AcquireReply> {
    if (replicas > 0) return super.acquire(request, replicas);
    return this.acquireNow(request, decodeAcquire, failure(request.key, 'acquire'));
  }

  /** Unsynced on classic pub/sub: the fast path's one script call. */
  override release(hold: StoredHold, requestId: string, replicas: number): Promise<number | null> {
    if (replicas > 0 || !this.host.classicKnown()) return super.release(hold, requestId, replicas);
    return this.releaseNow(hold, requestId, decodeRelease, failure(hold.key, 'release'));
  }

  acquireNow<T>(
    request: AcquireRequest,
    onReply: (reply: unknown) => T,
    onError: (error: unknown) => T,
  ): Promise<T> {
    const script = request.fencing ? ACQUIRE_FENCED : ACQUIRE;
    const numKeys = script.layout(layoutBuffer(), request, 'publish');
    return callLaid(this.host.client, script.script, numKeys, onReply, onError);
  }

  releaseNow<T>(
    hold: StoredHold,
    requestId: string,
    onReply: (reply: unknown) => T,
    onError: (error: unknown) => T,
  ): Promise<T> {
    const latch = unlockLatchKey(hold.name, requestId);
    const numKeys = RELEASE.layout(layoutBuffer(), hold, latch, 'publish');
    return callLaid(this.host.client, RELEASE.script, numKeys, onReply, onError);
  }

  channel(target: LockTarget): string {
    return channelName(target.name);
  }

  /** KeptReleasePort: release-kept.lua (synced with `replicas` replicas, best effort). */
  async releaseKept(
    hold: StoredHold,
    requestId: string,
    keepFor: number,
    replicas: number,
  ): Promise<boolean> {
    const call = scriptCall(RELEASE_KEPT, hold, unlockLatchKey(hold.name, requestId), keepFor);
    const [reply] = await this.host.run(call, replicas).catch(failure(hold.key, 'release'));
    return call.decode(reply);
  }
}
