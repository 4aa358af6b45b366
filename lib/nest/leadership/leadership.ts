import { Observable, type Subscriber } from 'rxjs';
import type { LeaderCampaign, LeaderChange, LockHandle } from '../../core';

export type { LeaderChange };

/** The key of a Leadership's current handle (a getter), for `@LeaderOnly`. */
export const LEADER_HANDLE = Symbol('Leadership handle');

/**
 * This application's campaign for the leadership of one name (from `LockService.leader()`):
 * one instance of all those campaigning for the name leads at a time, until it dies, loses its
 * lease, resigns or shuts down; then another is elected. Campaigns from application bootstrap
 * until closed (the module closes it at shutdown, resigning if leading).
 */
export class Leadership {
  /**
   * The current state on subscription, then every change: `{ leader: true, term }` when
   * elected, `{ leader: false }` when the term ends. Completes when the leadership is closed.
   */
  readonly changes$: Observable<LeaderChange>;
  /** The subscribers of changes$, completed by close(). */
  private readonly subscribers = new Set<Subscriber<LeaderChange>>();

  constructor(private readonly campaign: LeaderCampaign) {
    this.changes$ = new Observable<LeaderChange>((subscriber) => {
      const leader = campaign.isLeader;
      subscriber.next(leader ? { leader, term: campaign.term } : { leader });
      if (campaign.closed) {
        subscriber.complete();
        return undefined;
      }
      this.subscribers.add(subscriber);
      const unsubscribe = campaign.onChange((change) => subscriber.next(change));
      return () => {
        this.subscribers.delete(subscriber);
        unsubscribe();
      };
    });
  }

  /** The leader lock's handle while leading, for `@LeaderOnly` to run its method as its owner. */
  get [LEADER_HANDLE](): LockHandle | undefined {
    return this.campaign.handle;
  }

  /** The name campaigned for (the lock key, without `keyPrefix`). */
  get name(): string {
    return this.campaign.key;
  }

  /**
   * Whether this instance leads now. Checks the lease deadline on the monotonic clock on every
   * read: after a pause longer than the lease, the first read answers false.
   */
  get isLeader(): boolean {
    return this.campaign.isLeader;
  }

  /**
   * The term's fencing token while leading, strictly increasing across terms of the name (for
   * every client, Redisson's RFencedLock too); undefined when not leading or with
   * `fencing: false`. Pass it to the store your leader writes to, to reject a deposed leader.
   */
  get term(): number | undefined {
    return this.campaign.term;
  }

  /**
   * The current term's signal: aborted (a LockLostError as its reason) when the term ends, by
   * loss, resign or shutdown. Read when not leading: an aborted signal. Pass it to the work the
   * leader does.
   */
  get signal(): AbortSignal {
    return this.campaign.signal;
  }

  /** Resolves when this instance is elected (at once if it leads); rejects if closed first. */
  whenLeader(): Promise<void> {
    return this.campaign.whenLeader();
  }

  /**
   * Gives the current term up (its signal aborts, the lock is freed: a waiting instance is
   * elected within a round trip or two) and stands down briefly before campaigning again.
   * Resolves once the lock is freed; at once when not leading.
   */
  resign(): Promise<void> {
    return this.campaign.resign();
  }

  /**
   * Stops campaigning for good (`leader(name)` then returns this closed leadership, and
   * `@LeaderOnly(name)` methods skip); resigns first when leading. `changes$` completes.
   */
  async close(): Promise<void> {
    await this.campaign.close();
    for (const subscriber of this.subscribers) subscriber.complete();
  }
}
