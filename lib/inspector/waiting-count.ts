/**
 * How many processes wait for a lock: the subscribers of its release channel. Classic channels
 * are counted by PUBSUB NUMSUB (on a Cluster, summed over every node: a subscriber may be on any);
 * on a Cluster sharded channels too, by PUBSUB SHARDNUMSUB on the master of the channel's slot
 * (Redis >= 7; an older server's refusal counts 0).
 */
import { keySlot, type RedisClient, type ServerClient } from '../stores/redis';

/** The `count` of a `[channel, count]` reply of NUMSUB or SHARDNUMSUB; 0 when refused. */
async function subscribers(node: ServerClient | RedisClient, sub: string, channel: string) {
  try {
    const reply = (await node.command('pubsub', [sub, channel])) as [string, number | string];
    return Number(reply[1]);
  } catch {
    return 0;
  }
}

/** Subscribers of `channel`, classic and (on a Cluster) sharded. */
export async function waitingOn(client: RedisClient, channel: string): Promise<number> {
  if (!client.isCluster) return subscribers(client, 'numsub', channel);
  const master = client.slotMasters()(keySlot(channel));
  const counts = await Promise.all([
    ...client.nodes('all').map((node) => subscribers(node, 'numsub', channel)),
    master ? subscribers(master, 'shardnumsub', channel) : 0,
  ]);
  return counts.reduce((sum, count) => sum + count, 0);
}
