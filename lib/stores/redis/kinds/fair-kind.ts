import type { AcquireReply, AcquireRequest, LockTarget, StoredHold } from '../../../store';
import { fairWaiterChannel } from '../redis-names';
import { DEFAULT_PLACE_TIMEOUT, FAIR_ACQUIRE, FAIR_LEAVE, FAIR_RELEASE } from '../scripts/fair';
import { scriptCall, type PublishCommand, type ScriptCall } from '../scripts/script-definition';
import { oneOffLatch, ScriptKind } from './redis-kind';

/**
 * Fair locks (Redisson's RFairLock): the plain lock's hash, granted in the order of a queue in
 * Redis (fair-acquire.lua, fair-release.lua, fair-leave.lua); a release tells only the queue's
 * head, on its own channel (with nobody queued, the plain lock's channel). A waiter keeps its
 * owner id for every attempt, so a late grant is its own to answer for.
 */
export class FairKind extends ScriptKind {
  readonly requestDigit = '1';
  override readonly freeLateGrant = false;
  /**
   * The place timeout of this store's fair waiters (their last request's), ms: a release bounds
   * the deadline of a head nobody listens for by it.
   */
  private placeTimeout = DEFAULT_PLACE_TIMEOUT;

  override acquire(request: AcquireRequest, replicas: number): Promise<AcquireReply> {
    this.placeTimeout = request.placeTimeout ?? this.placeTimeout;
    return super.acquire(request, replicas);
  }

  protected acquireCall(
    request: AcquireRequest,
    publish: PublishCommand,
  ): ScriptCall<AcquireReply> {
    return scriptCall(FAIR_ACQUIRE, request, publish);
  }

  protected releaseCall(
    hold: StoredHold,
    latch: string,
    publish: PublishCommand,
  ): ScriptCall<number | null> {
    return scriptCall(FAIR_RELEASE, hold, latch, publish, this.placeTimeout, false);
  }

  /**
   * A grant too few replicas acknowledged goes back: a waiter to the head of its queue (its own
   * latch, so no later release of the owner reads this answer).
   */
  protected override undo(request: AcquireRequest, publish: PublishCommand): Promise<unknown> {
    const requeue = request.queue !== false;
    const call = scriptCall(
      FAIR_RELEASE,
      request,
      oneOffLatch(request.name),
      publish,
      this.placeTimeout,
      requeue,
    );
    return this.host.run(call, 0);
  }

  /** FairQueuePort: the waiter leaves the queue (fair-leave.lua). */
  async leave(request: AcquireRequest): Promise<void> {
    const publish = await this.host.publish();
    await this.host.run(scriptCall(FAIR_LEAVE, request, publish), 0);
  }

  /** A waiter's own channel: a release tells the queue's head there. */
  channel(target: LockTarget, owner: string): string {
    return fairWaiterChannel(target.name, owner);
  }
}
