import type { Cluster, Redis } from 'ioredis';
import type { StoredHold } from '../store/lock-store';
import { keySlot } from './key-slot';
import { LockScripts } from './lock-scripts';

/** Most holds renewed by one script call (Redisson batches 100 per call as well). */
export const RENEW_CALL_SIZE = 100;

/**
 * Renews plain-lock holds on a Redis Cluster with one round trip per master: holds are grouped
 * by the master that serves their slot (ioredis' slot table), and each master gets
 * ceil(holds / RENEW_CALL_SIZE) calls of renew-node.lua (keys in ARGV: declared keys of
 * different slots are refused with CROSSSLOT), written back to back on its connection. A hold
 * the node cannot serve (its slot moved or is migrating) is renewed once more through the
 * Cluster client with renew.lua, which follows MOVED and ASK.
 *
 * Resolves one result per hold: true (still held), false (lost), or the Error of a call that
 * got no answer (the hold is neither confirmed nor lost).
 */
export async function renewOnCluster(
  cluster: Cluster,
  holds: readonly StoredHold[],
  leaseTime: number,
): Promise<(boolean | Error)[]> {
  const results: (boolean | Error)[] = new Array<boolean | Error>(holds.length);
  const masters = new Map(cluster.nodes('master').map((node) => [nodeKey(node), node]));
  const byMaster = new Map<Redis | undefined, number[]>();
  holds.forEach((hold, index) => {
    const master = masters.get(cluster.slots[keySlot(hold.name)]?.[0] ?? '');
    const group = byMaster.get(master);
    if (group) group.push(index);
    else byMaster.set(master, [index]);
  });
  const elsewhere = byMaster.get(undefined) ?? [];
  byMaster.delete(undefined);
  const calls: Promise<void>[] = [];
  for (const [master, indexes] of byMaster) {
    for (let start = 0; start < indexes.length; start += RENEW_CALL_SIZE) {
      const chunk = indexes.slice(start, start + RENEW_CALL_SIZE);
      const args: (string | number)[] = [leaseTime];
      for (const index of chunk) args.push(holds[index].name, holds[index].owner);
      const call = LockScripts.renewOnNode.run(master!, 0, ...args).then(
        (reply) =>
          chunk.forEach((index, j) => {
            const value = Number((reply as unknown[])[j]);
            if (value === 2) elsewhere.push(index);
            else results[index] = value === 1;
          }),
        (error: unknown) => chunk.forEach((index) => (results[index] = asError(error))),
      );
      calls.push(call);
    }
  }
  await Promise.all(calls);
  await Promise.all(
    elsewhere.map((index) =>
      LockScripts.renew.run(cluster, 1, holds[index].name, leaseTime, holds[index].owner).then(
        (reply) => (results[index] = Number((reply as unknown[])[0]) === 1),
        (error: unknown) => (results[index] = asError(error)),
      ),
    ),
  );
  return results;
}

function nodeKey(node: Redis): string {
  return `${node.options.host}:${node.options.port}`;
}

function asError(error: unknown): Error {
  return error instanceof Error ? error : new Error(String(error));
}
