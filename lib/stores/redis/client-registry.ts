/**
 * The client registry in Redis: one string per live client, `redisson_lock_client:{<id>}`, the
 * client's ClientInfo as JSON, with a TTL (PX). The client refreshes it every third of the TTL
 * on an unref'd timer of its own, never on the lock path, so a process that dies leaves a record
 * that expires within one TTL. One key per client, each in its own slot: fine on a Cluster.
 */
import type { ClientInfo } from '../../store';
import { resolvesWithin } from '../../time/time-limit';
import type { RedisClient } from './client';

/** How long stop() waits for the DEL of the record, ms (it expires anyway). */
const UNREGISTER_TIMEOUT = 200;

/** The SCAN pattern of every client record. */
export const CLIENT_KEY_PATTERN = 'redisson_lock_client:*';

/** The record of client `id`. */
export function clientKey(id: string): string {
  return `redisson_lock_client:{${id}}`;
}

/** The client id in a record's key (clientKey's inverse); undefined for another key. */
export function clientIdOfKey(key: string): string | undefined {
  const match = /^redisson_lock_client:\{([^}]+)\}$/.exec(key);
  return match?.[1];
}

/**
 * The client id of an owner field of a lock hash or a permit set (`<uuid>:<n>`, `<uuid>:<n>:write`,
 * `<uuid>:<n>:kept`; Redisson's `<uuid>:<thread id>`): the part before the first `:`. Undefined
 * for a field that is not an owner's (a read-write lock's `mode`).
 */
export function ownerClientId(field: string): string | undefined {
  const colon = field.indexOf(':');
  return colon > 0 ? field.slice(0, colon) : undefined;
}

/** A record's JSON as ClientInfo, or undefined when it is not one of ours. */
export function parseClientInfo(json: unknown): ClientInfo | undefined {
  if (typeof json !== 'string') return undefined;
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch {
    return undefined;
  }
  const record = value as Partial<Record<keyof ClientInfo, unknown>>;
  if (
    typeof value !== 'object' ||
    value === null ||
    typeof record.id !== 'string' ||
    typeof record.app !== 'string' ||
    typeof record.host !== 'string' ||
    typeof record.pid !== 'number'
  ) {
    return undefined;
  }
  return {
    id: record.id,
    app: record.app,
    host: record.host,
    pid: record.pid,
    version: typeof record.version === 'string' ? record.version : 'unknown',
    startedAt: typeof record.startedAt === 'number' ? record.startedAt : 0,
    keyPrefix: typeof record.keyPrefix === 'string' ? record.keyPrefix : '',
  };
}

/** Reads client `id`'s record: undefined when it is not registered (or Redis refused). */
export async function readClientInfo(
  client: RedisClient,
  id: string,
): Promise<ClientInfo | undefined> {
  return parseClientInfo(await client.command('get', [clientKey(id)]));
}

/**
 * The registered client of the first owner field found under `names` (a lock hash each; a name
 * that is not a hash, such as a semaphore's, is skipped).
 */
export async function holderOfNames(
  client: RedisClient,
  names: readonly string[],
): Promise<ClientInfo | undefined> {
  for (const name of names) {
    let fields: unknown;
    try {
      fields = await client.command('hkeys', [name]);
    } catch {
      continue; // WRONGTYPE: not a lock hash
    }
    const id = (fields as string[]).map(ownerClientId).find((found) => found !== undefined);
    if (id !== undefined) return readClientInfo(client, id);
  }
  return undefined;
}

/** One client's registration: written now, refreshed every third of its TTL, removed at stop(). */
export class ClientRegistration {
  private timer: NodeJS.Timeout | undefined;
  private key: string | undefined;
  /** A write is on its way: the next tick skips (no pile-up in the offline queue while down). */
  private writing = false;

  constructor(private readonly client: RedisClient) {}

  /** Registers `info` for `ttl` ms and keeps it registered until stop(). */
  start(info: ClientInfo, ttl: number): void {
    this.stopTimer();
    const key = clientKey(info.id);
    const value = JSON.stringify(info);
    const ttlMs = Math.max(1, Math.ceil(ttl));
    this.key = key;
    const write = () => {
      if (this.writing) return;
      this.writing = true;
      this.client
        .command('set', [key, value, 'PX', ttlMs])
        .catch(() => undefined) // retried at the next tick; the record expires meanwhile
        .finally(() => (this.writing = false));
    };
    write();
    this.timer = setInterval(write, Math.max(1, Math.floor(ttlMs / 3)));
    this.timer.unref();
  }

  /**
   * Stops refreshing and deletes the record: best effort, only on a ready connection and for at
   * most UNREGISTER_TIMEOUT ms (a shutdown never waits for Redis); else it expires within its TTL.
   */
  async stop(): Promise<void> {
    this.stopTimer();
    const key = this.key;
    this.key = undefined;
    if (key === undefined || this.client.status !== 'ready') return;
    await resolvesWithin(this.client.command('del', [key]), UNREGISTER_TIMEOUT);
  }

  private stopTimer(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }
}
