/**
 * Shared tools of the Cluster and Sentinel spawners: admin connections to the servers they
 * started, a poll that outlasts nodes still starting, and parsers for INFO-style replies.
 */
import { Redis } from 'ioredis';
import { until } from '../time';
import { LOOPBACK } from './redis-process';

/**
 * Resolves once `predicate` holds (polled every 20 ms; a predicate that throws, on a node still
 * starting or just killed, is tried again); rejects after `timeout` ms.
 */
export const untilNodes = (
  what: string,
  predicate: () => boolean | Promise<boolean>,
  timeout = 20_000,
): Promise<void> => until(predicate, timeout, { what, every: 20, retryErrors: true });

/**
 * One cached admin connection per loopback port. A connection that fails is not retried (a
 * command on a dead node rejects at once) and the next get() opens a fresh one.
 */
export class AdminPool {
  private readonly connections = new Map<number, Redis>();

  /** The admin connection to `port`. */
  get(port: number): Redis {
    const existing = this.connections.get(port);
    if (existing && existing.status !== 'end') return existing;
    const redis = new Redis({
      host: LOOPBACK,
      port,
      maxRetriesPerRequest: 0,
      retryStrategy: () => null,
      connectTimeout: 1_000,
    });
    redis.on('error', () => undefined);
    this.connections.set(port, redis);
    return redis;
  }

  /** Closes every connection. */
  closeAll(): void {
    this.connections.forEach((redis) => redis.disconnect());
    this.connections.clear();
  }
}

/** An INFO reply as field → value. */
export function parseInfo(text: string): Record<string, string> {
  const fields: Record<string, string> = {};
  for (const line of text.split('\r\n')) {
    const colon = line.indexOf(':');
    if (colon > 0 && !line.startsWith('#')) fields[line.slice(0, colon)] = line.slice(colon + 1);
  }
  return fields;
}

/** INFO commandstats as command → calls, e.g. `{ evalsha: 3, 'cluster|nodes': 1 }`. */
export function parseCommandstats(text: string): Record<string, number> {
  const calls: Record<string, number> = {};
  for (const [field, value] of Object.entries(parseInfo(text))) {
    const count = /(?:^|,)calls=(\d+)/.exec(value);
    if (field.startsWith('cmdstat_') && count) calls[field.slice(8)] = Number(count[1]);
  }
  return calls;
}

/** A flat field/value array reply (SENTINEL MASTER, SENTINEL REPLICAS entries) as an object. */
export function pairs(reply: unknown): Record<string, string> {
  const list = reply as string[];
  const fields: Record<string, string> = {};
  for (let i = 0; i + 1 < list.length; i += 2) fields[list[i]] = list[i + 1];
  return fields;
}
