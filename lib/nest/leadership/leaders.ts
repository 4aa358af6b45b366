import {
  checkLeaderOptions,
  type LeaderCampaign,
  type LeaderOptions,
  type LockEngine,
} from '../../core';
import { LockOptionsError } from '../../errors';
import { Leadership } from './leadership';

/** One name's campaign, with the options it was made with. */
interface Entry {
  readonly leadership: Leadership;
  readonly campaign: LeaderCampaign;
  readonly leaseTime: number | undefined;
  readonly fencing: boolean;
}

/**
 * The application's leadership campaigns, one per name (shared by `LockService.leader(name)`
 * and every `@LeaderOnly(name)`): started at application bootstrap (or when made, after it),
 * closed at shutdown before the engine stops, so a leader resigns and hands over at once.
 */
export class Leaders {
  private readonly byName = new Map<string, Entry>();
  private started = false;
  private shutDown = false;

  constructor(private readonly engine: LockEngine) {}

  /**
   * The campaign for `name`: the one made before (running, or closed: closing is for good), or
   * a new one (after shutdown: a closed one). Options given that differ from the first call's:
   * LockOptionsError.
   */
  get(name: string, options?: LeaderOptions): Leadership {
    const checked = checkLeaderOptions(options);
    const fencing = checked.fencing ?? true;
    const running = this.byName.get(name);
    if (running !== undefined) {
      if (
        options !== undefined &&
        (running.leaseTime !== checked.leaseTime || running.fencing !== fencing)
      ) {
        throw new LockOptionsError(
          'options',
          `the leadership of "${name}" was asked for with other options already (leaseTime ${String(running.leaseTime ?? 'default')}, fencing ${running.fencing}); give its options on the first leader("${name}", options) call only.`,
        );
      }
      return running.leadership;
    }
    const campaign = this.engine.leadership(name, checked);
    const leadership = new Leadership(campaign);
    this.byName.set(name, { leadership, campaign, leaseTime: checked.leaseTime, fencing });
    if (this.shutDown) void leadership.close();
    else if (this.started) campaign.start();
    return leadership;
  }

  /** Starts every campaign, and those made later at once (application bootstrap). */
  start(): void {
    this.started = true;
    for (const { campaign } of this.byName.values()) campaign.start();
  }

  /** Closes every campaign (a leader resigns), and those made later at once (shutdown). */
  async close(): Promise<void> {
    this.shutDown = true;
    await Promise.all([...this.byName.values()].map(({ leadership }) => leadership.close()));
  }
}
