import type { StoredHold } from '../../store';
import type { ClusterClient, RedisClient, ScriptRunner } from './client';
import { keySlot } from './key-slot';
import { LockScripts } from './lock-scripts';
import { permitsName, readLeaseKey } from './redis-names';

/** Most entries renewed by one script call (Redisson batches 100 per call as well). */
export const RENEW_CALL_SIZE = 100;

/** One hash to renew for one owner: what renew-all.lua and renew-node.lua take per hold. */
interface Entry {
  /** 'l' exclusive, 'w' write hold, 'r' read hold; 'p' a permit (semaphore-renew.lua). */
  readonly kind: 'l' | 'w' | 'r' | 'p';
  /** The hash (for 'p': the permits zset), then for 'r' the hold's lease key. */
  readonly keys: readonly string[];
  readonly owner: string;
  /** The index of the hold it belongs to. */
  readonly hold: number;
}

/**
 * Renews holds of every kind, RENEW_CALL_SIZE entries per script call, all calls written at
 * once: a multi-lock renews each member, a read hold its hash and lease key. On one server:
 * renew-all.lua for locks, semaphore-renew.lua for permits. On a Cluster, locks are grouped by
 * the master that serves their slot (the client's slot table) and renewed with renew-node.lua (keys
 * in ARGV: declared keys of different slots are refused with CROSSSLOT), one round trip and
 * ceil(entries / RENEW_CALL_SIZE) calls per master; an entry the node cannot serve (its slot
 * moved or is migrating) is renewed once more through the Cluster client, which follows MOVED
 * and ASK, RENEW_CALL_SIZE per call per slot. Permits go the same way (renew-node.lua knows
 * them; semaphore-renew.lua through the Cluster client).
 *
 * Resolves one result per hold: true (every entry still held), false (one lost), or the Error
 * of a call that got no answer (neither confirmed nor lost).
 */
export async function renewHolds(
  client: RedisClient,
  holds: readonly StoredHold[],
  leaseTime: number,
): Promise<(boolean | Error)[]> {
  const results: (boolean | Error)[] = holds.map(() => true);
  const note = (entry: Entry, result: boolean | Error) => {
    const current = results[entry.hold];
    // A loss outweighs an unanswered call, which outweighs a confirmation.
    if (current === false) return;
    if (result === false || current === true) results[entry.hold] = result;
  };
  const locks: Entry[] = [];
  const permits: Entry[] = [];
  holds.forEach((hold, index) => {
    for (const entry of entriesOf(hold, index)) (entry.kind === 'p' ? permits : locks).push(entry);
  });
  const calls: Promise<void>[] = client.isCluster
    ? [renewOnMasters(client, [...locks, ...permits], leaseTime, note)]
    : [
        ...chunks(locks).map((chunk) => renewLocks(client, chunk, leaseTime, note)),
        ...chunks(permits).map((chunk) => renewPermits(client, chunk, leaseTime, note)),
      ];
  await Promise.all(calls);
  return results;
}

function entriesOf(hold: StoredHold, index: number): Entry[] {
  const { owner } = hold;
  switch (hold.kind) {
    case 'multi':
      return (hold.names ?? [hold.name]).map((name) => ({
        kind: 'l',
        keys: [name],
        owner,
        hold: index,
      }));
    case 'read':
      return [{ kind: 'r', keys: [hold.name, readLeaseKey(hold.name, owner)], owner, hold: index }];
    case 'write':
      return [{ kind: 'w', keys: [hold.name], owner, hold: index }];
    case 'permit':
      return [{ kind: 'p', keys: [permitsName(hold.name)], owner, hold: index }];
    default:
      return [{ kind: 'l', keys: [hold.name], owner, hold: index }];
  }
}

function chunks(entries: readonly Entry[]): Entry[][] {
  const out: Entry[][] = [];
  for (let start = 0; start < entries.length; start += RENEW_CALL_SIZE)
    out.push(entries.slice(start, start + RENEW_CALL_SIZE));
  return out;
}

type Note = (entry: Entry, result: boolean | Error) => void;

/** renew-all.lua on one server or through the Cluster client (entries of one slot). */
function renewLocks(
  client: ScriptRunner,
  chunk: readonly Entry[],
  leaseTime: number,
  note: Note,
): Promise<void> {
  const keys = chunk.flatMap((entry) => entry.keys);
  const args = [leaseTime, chunk.map((entry) => entry.kind).join(''), ...chunk.map((e) => e.owner)];
  return LockScripts.renew.run(client, keys.length, ...keys, ...args).then(
    (reply) => chunk.forEach((entry, j) => note(entry, Number((reply as unknown[])[j]) === 1)),
    (error: unknown) => chunk.forEach((entry) => note(entry, asError(error))),
  );
}

function renewPermits(
  client: ScriptRunner,
  chunk: readonly Entry[],
  leaseTime: number,
  note: Note,
): Promise<void> {
  const keys = chunk.map((entry) => entry.keys[0]);
  return LockScripts.semaphoreRenew
    .run(client, keys.length, ...keys, leaseTime, ...chunk.map((entry) => entry.owner))
    .then(
      (reply) => chunk.forEach((entry, j) => note(entry, Number((reply as unknown[])[j]) === 1)),
      (error: unknown) => chunk.forEach((entry) => note(entry, asError(error))),
    );
}

/**
 * On a Cluster: lock entries grouped by the master that serves their slot, each master's
 * chunks written back to back (renew-node.lua); entries a master could not serve are renewed
 * through the Cluster client afterwards, in batches of one slot.
 */
async function renewOnMasters(
  cluster: ClusterClient,
  entries: readonly Entry[],
  leaseTime: number,
  note: Note,
): Promise<void> {
  const masterOf = cluster.slotMasters();
  const byMaster = new Map<ScriptRunner | undefined, Entry[]>();
  for (const entry of entries) {
    const master = masterOf(keySlot(entry.keys[0]));
    const group = byMaster.get(master);
    if (group) group.push(entry);
    else byMaster.set(master, [entry]);
  }
  const elsewhere = byMaster.get(undefined) ?? [];
  byMaster.delete(undefined);
  const calls: Promise<void>[] = [];
  for (const [master, group] of byMaster) {
    for (const chunk of chunks(group)) {
      const args: (string | number)[] = [leaseTime, chunk.map((entry) => entry.kind).join('')];
      for (const entry of chunk) args.push(entry.keys[0], entry.owner, ...entry.keys.slice(1));
      calls.push(
        LockScripts.renewOnNode.run(master!, 0, ...args).then(
          (reply) =>
            chunk.forEach((entry, j) => {
              const value = Number((reply as unknown[])[j]);
              if (value === 2) elsewhere.push(entry);
              else note(entry, value === 1);
            }),
          (error: unknown) => chunk.forEach((entry) => note(entry, asError(error))),
        ),
      );
    }
  }
  await Promise.all(calls);
  // Through the Cluster client (KEYS of one slot, so it follows MOVED and ASK), per slot.
  await Promise.all(
    bySlot(elsewhere).flatMap((group) => {
      const [permits, locks] = [group.filter(isPermit), group.filter((e) => !isPermit(e))];
      return [
        ...chunks(locks).map((chunk) => renewLocks(cluster, chunk, leaseTime, note)),
        ...chunks(permits).map((chunk) => renewPermits(cluster, chunk, leaseTime, note)),
      ];
    }),
  );
}

const isPermit = (entry: Entry) => entry.kind === 'p';

function bySlot(entries: readonly Entry[]): Entry[][] {
  const groups = new Map<number, Entry[]>();
  for (const entry of entries) {
    const slot = keySlot(entry.keys[0]);
    const group = groups.get(slot);
    if (group) group.push(entry);
    else groups.set(slot, [entry]);
  }
  return [...groups.values()];
}

function asError(error: unknown): Error {
  return error instanceof Error ? error : new Error(String(error));
}
