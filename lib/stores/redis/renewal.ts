import type { ClusterClient, RedisClient, ScriptRunner } from './client';
import { keySlot } from './key-slot';
import {
  isPermitEntry,
  RENEW_ALL,
  RENEW_NODE,
  SEMAPHORE_RENEW,
  type RenewEntry as Entry,
} from './scripts/renew';
import { runScript } from './scripts/script-definition';

/** Most entries renewed by one script call (Redisson batches 100 per call as well). */
export const RENEW_CALL_SIZE = 100;

/**
 * Renews the `entries` of `count` holds (each kind says which entries its holds have: a
 * multi-lock each member, a read hold its hash and lease key), RENEW_CALL_SIZE entries per
 * script call, all calls written at once. On one server:
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
  count: number,
  entries: readonly Entry[],
  leaseTime: number,
): Promise<(boolean | Error)[]> {
  const results: (boolean | Error)[] = new Array<boolean | Error>(count).fill(true);
  const note = (entry: Entry, result: boolean | Error) => {
    const current = results[entry.hold];
    // A loss outweighs an unanswered call, which outweighs a confirmation.
    if (current === false) return;
    if (result === false || current === true) results[entry.hold] = result;
  };
  const locks: Entry[] = [];
  const permits: Entry[] = [];
  for (const entry of entries) (isPermitEntry(entry) ? permits : locks).push(entry);
  const calls: Promise<void>[] = client.isCluster
    ? [renewOnMasters(client, [...locks, ...permits], leaseTime, note)]
    : [
        ...chunks(locks).map((chunk) => renewLocks(client, chunk, leaseTime, note)),
        ...chunks(permits).map((chunk) => renewPermits(client, chunk, leaseTime, note)),
      ];
  await Promise.all(calls);
  return results;
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
  return runScript(client, RENEW_ALL, chunk, leaseTime).then(
    (renewed) => chunk.forEach((entry, j) => note(entry, renewed[j] === 1)),
    (error: unknown) => chunk.forEach((entry) => note(entry, asError(error))),
  );
}

function renewPermits(
  client: ScriptRunner,
  chunk: readonly Entry[],
  leaseTime: number,
  note: Note,
): Promise<void> {
  return runScript(client, SEMAPHORE_RENEW, chunk, leaseTime).then(
    (renewed) => chunk.forEach((entry, j) => note(entry, renewed[j] === 1)),
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
      calls.push(
        runScript(master!, RENEW_NODE, chunk, leaseTime).then(
          (renewed) =>
            chunk.forEach((entry, j) => {
              const value = renewed[j];
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
      const [permits, locks] = [
        group.filter(isPermitEntry),
        group.filter((e) => !isPermitEntry(e)),
      ];
      return [
        ...chunks(locks).map((chunk) => renewLocks(cluster, chunk, leaseTime, note)),
        ...chunks(permits).map((chunk) => renewPermits(cluster, chunk, leaseTime, note)),
      ];
    }),
  );
}

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
