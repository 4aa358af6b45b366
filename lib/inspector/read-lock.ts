/**
 * Reads what lives under one lock name in one round trip: a pipeline of reads of the name and
 * its Redisson companions (all in the name's cluster slot), decoded into a LockSummary whose
 * owners' clients are not looked up yet (see LockInspector).
 */
import {
  fairQueueName,
  fairTimeoutName,
  ownerClientId,
  permitsName,
  tokenKey,
  type Outcome,
  type PipelineCommand,
  type RedisClient,
} from '../stores/redis';
import type {
  HolderView,
  LockKindFound,
  LockSummary,
  PermitCount,
  QueuedView,
} from './lock-description';

/** The reads, in the order decode() reads their outcomes. */
function reads(name: string): PipelineCommand[] {
  return [
    ['type', name],
    ['pttl', name],
    ['hgetall', name],
    ['get', name],
    ['get', tokenKey(name)],
    ['lrange', fairQueueName(name), 0, -1],
    ['zrange', fairTimeoutName(name), 0, -1, 'WITHSCORES'],
    ['zrange', permitsName(name), 0, -1, 'WITHSCORES'],
    ['time'],
  ];
}

/** Reads lock `prefix + key` (clients unresolved: `client` undefined). */
export async function readLock(
  client: RedisClient,
  prefix: string,
  key: string,
): Promise<LockSummary> {
  const name = prefix + key;
  return decode(key, name, await client.pipeline(reads(name)));
}

/** An outcome's reply, or undefined when Redis refused that command (WRONGTYPE). */
function reply(outcome: Outcome | undefined): unknown {
  if (outcome === undefined) return undefined;
  if (outcome[0] !== null && outcome[0].message.startsWith('WRONGTYPE')) return undefined;
  if (outcome[0] !== null) throw outcome[0];
  return outcome[1];
}

/** `[member, score, member, score, …]` as pairs. */
function scored(flat: unknown): [string, number][] {
  const list = Array.isArray(flat) ? (flat as string[]) : [];
  const pairs: [string, number][] = [];
  for (let i = 0; i + 1 < list.length; i += 2) pairs.push([list[i], Number(list[i + 1])]);
  return pairs;
}

/** An owner id's view with its client not looked up yet. */
function owner(id: string) {
  return { owner: id, clientId: ownerClientId(id) ?? id, client: undefined };
}

function decode(key: string, name: string, outcomes: Outcome[]): LockSummary {
  const [type, pttl, hash, text, token, queue, deadlines, permits, time] = outcomes.map(reply);
  const [seconds, micros] = (time as [string, string]).map(Number);
  const redisNow = seconds * 1000 + Math.floor(micros / 1000);
  const fields = (hash ?? {}) as Record<string, string>;
  const queued = Array.isArray(queue) ? (queue as string[]) : [];
  const deadlineOf = new Map(scored(deadlines));
  const kind = kindOf(type as string, fields, queued.length > 0 || deadlineOf.size > 0, text);
  const ttlMs = Number(pttl);
  return {
    key,
    name,
    kind,
    redisType: type as string,
    holders:
      kind === 'semaphore'
        ? permitHolders(scored(permits), redisNow)
        : hashHolders(fields, kind === 'read-write'),
    ttl: ttlMs === -2 ? null : ttlMs === -1 ? Infinity : ttlMs,
    fencingToken: token === null || token === undefined ? undefined : Number(token),
    queue: queued.map((id): QueuedView => ({ ...owner(id), deadline: deadlineOf.get(id) })),
    permits: kind === 'semaphore' ? permitCount(text, scored(permits), redisNow) : undefined,
  };
}

function kindOf(
  type: string,
  fields: Record<string, string>,
  fairQueue: boolean,
  text: unknown,
): LockKindFound {
  if (type === 'none') return fairQueue ? 'fair' : 'free';
  if (type === 'hash') return 'mode' in fields ? 'read-write' : fairQueue ? 'fair' : 'plain';
  if (type === 'string' && /^-?\d+$/.test(String(text))) return 'semaphore';
  return 'other';
}

/** A lock hash's owner fields (a read-write lock's writer field ends in `:write`). */
function hashHolders(fields: Record<string, string>, readWrite: boolean): HolderView[] {
  const holders: HolderView[] = [];
  for (const [field, count] of Object.entries(fields)) {
    if (field === 'mode' || ownerClientId(field) === undefined) continue;
    const holdCount = Number(count);
    if (readWrite) {
      const write = field.endsWith(':write');
      const id = write ? field.slice(0, -':write'.length) : field;
      holders.push({ ...owner(id), holdCount, mode: write ? 'write' : 'read' });
    } else if (field.endsWith(':kept')) {
      holders.push({ ...owner(field.slice(0, -':kept'.length)), holdCount, kept: true });
    } else {
      holders.push({ ...owner(field), holdCount });
    }
  }
  return holders;
}

/** A semaphore's permits not expired, each with the ms left of its lease. */
function permitHolders(permits: [string, number][], redisNow: number): HolderView[] {
  return permits
    .filter(([, end]) => end > redisNow)
    .map(([id, end]) => ({ ...owner(id), holdCount: 1, ttl: end - redisNow }));
}

/** Used: permits not expired; free: the stored count plus the expired ones. */
function permitCount(text: unknown, permits: [string, number][], redisNow: number): PermitCount {
  const used = permits.filter(([, end]) => end > redisNow).length;
  return { used, free: Number(text) + (permits.length - used) };
}
