import { keySlot } from '../../key-slot';
import type {
  ClusterClient,
  Outcome,
  PipelineCommand,
  RedisArg,
  ServerClient,
} from '../redis-client';
import { CLUSTER_EVENTS, NodeRedisConnection } from './node-redis-connection';
import { nodeRedisServer, outcomesOf, wire } from './node-redis-server';
import type { NodeRedisCluster, NodeRedisClusterNode } from './node-redis-types';
import { RESP2_REPLIES, resp2CommandReply, resp2Reply } from './replies';

/** Commands of a pipeline that name no key (their first argument is not one). */
const KEYLESS = new Set(['wait', 'time', 'ping', 'info']);

/**
 * The key a pipeline command names first: a script's first key, none for a keyless command,
 * else its first argument.
 */
function firstKeyOf([name, ...args]: PipelineCommand): string | undefined {
  if (name === 'evalsha' || name === 'eval') {
    return Number(args[1]) > 0 ? String(args[2]) : undefined;
  }
  return KEYLESS.has(name) || args.length === 0 ? undefined : String(args[0]);
}

/** Whether a command was refused because its slot is served elsewhere (MOVED, ASK). */
function redirected([error]: Outcome): boolean {
  return error !== null && /^(MOVED|ASK) /.test(error.message);
}

/**
 * The client port on a node-redis Cluster client (createCluster). Keyed commands go through
 * node-redis' routing (the master of the first key's slot; MOVED and ASK followed). Commands
 * that concern one node (INFO, PING, a pipeline, WAIT) go to a node's own connection instead:
 * node-redis 6 sends a command given to the Cluster client by its request policy, which for
 * WAIT, INFO and PING is every master. The masters come from node-redis' slot map (its public
 * `masters`, `replicas` and `slots`); a node whose connection node-redis has not made (a Cluster
 * client made with `minimizeConnections`) is left out until it has.
 */
export class NodeRedisClusterClient
  extends NodeRedisConnection<NodeRedisCluster>
  implements ClusterClient
{
  readonly isCluster = true;

  constructor(redis: NodeRedisCluster) {
    super(redis, CLUSTER_EVENTS);
  }

  private send(firstKey: string | undefined, name: string, args: readonly RedisArg[]) {
    return this.redis.sendCommand(firstKey, false, wire(name, args), RESP2_REPLIES);
  }

  evalsha(sha: string, numKeys: number, keysAndArgs: readonly RedisArg[]): Promise<unknown> {
    const key = numKeys > 0 ? String(keysAndArgs[0]) : undefined;
    return this.send(key, 'EVALSHA', [sha, numKeys, ...keysAndArgs]).then(resp2Reply);
  }

  eval(source: string, numKeys: number, keysAndArgs: readonly RedisArg[]): Promise<unknown> {
    const key = numKeys > 0 ? String(keysAndArgs[0]) : undefined;
    return this.send(key, 'EVAL', [source, numKeys, ...keysAndArgs]).then(resp2Reply);
  }

  /** Never called on a Cluster (see ScriptRunner.scriptLoad): on any one node. */
  scriptLoad(source: string): Promise<unknown> {
    return this.anyNode().then((node) => node.scriptLoad(source));
  }

  /** Nothing to do: node-redis writes each node's commands of one tick together. */
  batchWrites(): void {}

  /**
   * The commands on the connection of the master serving their slot, back to back (see
   * NodeRedisServer.pipeline). When that master answers that the slot moved (MOVED, ASK: the
   * slot map was out of date), the first command goes again through the Cluster client, which
   * follows the redirection and refreshes the map, and the others then on the connection of
   * the master now serving the slot.
   */
  async pipeline(commands: readonly PipelineCommand[]): Promise<Outcome[]> {
    const key = commands.map(firstKeyOf).find((found) => found !== undefined);
    const slot = key === undefined ? undefined : keySlot(key);
    const outcomes = await (await this.nodeOf(slot)).pipeline(commands);
    if (key === undefined || !outcomes.some(redirected)) return outcomes;
    const [first, ...rest] = commands;
    const [firstOutcome] = await outcomesOf([first], [this.send(key, first[0], first.slice(1))]);
    return [firstOutcome, ...(await (await this.nodeOf(slot)).pipeline(rest))];
  }

  hget(key: string, field: string): Promise<string | null> {
    return this.send(key, 'HGET', [key, field]) as Promise<string | null>;
  }

  command(name: string, args: readonly RedisArg[]): Promise<unknown> {
    const key = args.length > 0 ? String(args[0]) : undefined;
    return this.send(key, name, args).then((reply) => resp2CommandReply(name, args, reply));
  }

  info(section: string): Promise<string> {
    return this.anyNode().then((node) => node.info(section));
  }

  ping(): Promise<unknown> {
    return this.anyNode().then((node) => node.ping());
  }

  slotMasters(): (slot: number) => ServerClient | undefined {
    const { slots } = this.redis;
    return (slot) => connected(slots[slot]?.master);
  }

  nodes(role: 'master' | 'all'): ServerClient[] {
    const nodes =
      role === 'master' ? this.redis.masters : [...this.redis.masters, ...this.redis.replicas];
    return nodes.map(connected).filter((node) => node !== undefined);
  }

  /** The master serving `slot` (any master when undefined), as the slot map has it. */
  private async nodeOf(slot: number | undefined): Promise<ServerClient> {
    const node = slot === undefined ? undefined : connected(this.redis.slots[slot]?.master);
    return node ?? this.anyNode();
  }

  /** The first master with a connection. */
  private anyNode(): Promise<ServerClient> {
    const node = this.nodes('master')[0];
    if (node) return Promise.resolve(node);
    return Promise.reject(new Error(`no connected Cluster master (the client is ${this.status})`));
  }
}

/** The port's client on a node's connection; undefined while node-redis has made none. */
function connected(node: NodeRedisClusterNode | undefined): ServerClient | undefined {
  return node?.client && nodeRedisServer(node.client);
}
