import type { ClientInfo } from '../store';
import { readClientInfo, type RedisClient } from '../stores/redis';
import type { LockSummary, OwnerView } from './lock-description';

/**
 * The registered clients of owner ids, each read from Redis once per inspection (one GET of
 * `redisson_lock_client:{<id>}` per client id, however many locks it holds).
 */
export class ClientLookup {
  private readonly found = new Map<string, Promise<ClientInfo | undefined>>();

  constructor(private readonly client: RedisClient) {}

  /** Client `id`'s registration; undefined when it has none (or it cannot be read). */
  get(id: string): Promise<ClientInfo | undefined> {
    let info = this.found.get(id);
    if (info === undefined) {
      info = readClientInfo(this.client, id).catch(() => undefined);
      this.found.set(id, info);
    }
    return info;
  }

  /** `summary` with the client of each holder and queued waiter filled in. */
  async resolve<S extends LockSummary>(summary: S): Promise<S> {
    const withClient = async <O extends OwnerView>(view: O): Promise<O> => ({
      ...view,
      client: await this.get(view.clientId),
    });
    const [holders, queue] = await Promise.all([
      Promise.all(summary.holders.map(withClient)),
      Promise.all(summary.queue.map(withClient)),
    ]);
    return { ...summary, holders, queue };
  }
}
