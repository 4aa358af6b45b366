import type { Outcome, PipelineCommand, RedisArg, ServerClient } from '../redis-client';
import { CLIENT_EVENTS, NodeRedisConnection } from './node-redis-connection';
import type { NodeRedisClient } from './node-redis-types';
import { RESP2_REPLIES, resp2CommandReply, resp2Reply } from './replies';

/** A command as node-redis sends it: every argument a string. */
export function wire(name: string, args: readonly RedisArg[]): string[] {
  const command = [name];
  for (const arg of args) command.push(String(arg));
  return command;
}

/** The outcomes of `replies`, each settled on its own (a refused command fails only itself). */
export function outcomesOf(
  commands: readonly PipelineCommand[],
  replies: readonly Promise<unknown>[],
): Promise<Outcome[]> {
  return Promise.all(
    replies.map((reply, i) =>
      reply.then(
        (value): Outcome => [null, resp2CommandReply(commands[i][0], commands[i].slice(1), value)],
        (error: unknown): Outcome => [
          error instanceof Error ? error : new Error(String(error)),
          null,
        ],
      ),
    ),
  );
}

/**
 * The client port on one node-redis client: a server (createClient), or one node of a Cluster
 * (its command connection, from node-redis' slot map). Replies come as RESP2 gives them (see
 * RESP2_REPLIES), whatever protocol the client speaks.
 */
export class NodeRedisServer extends NodeRedisConnection<NodeRedisClient> implements ServerClient {
  readonly isCluster = false;

  constructor(redis: NodeRedisClient) {
    super(redis, CLIENT_EVENTS);
  }

  private send(name: string, args: readonly RedisArg[]): Promise<unknown> {
    return this.redis.sendCommand(wire(name, args), RESP2_REPLIES);
  }

  evalsha(sha: string, numKeys: number, keysAndArgs: readonly RedisArg[]): Promise<unknown> {
    return this.send('EVALSHA', [sha, numKeys, ...keysAndArgs]).then(resp2Reply);
  }

  eval(source: string, numKeys: number, keysAndArgs: readonly RedisArg[]): Promise<unknown> {
    return this.send('EVAL', [source, numKeys, ...keysAndArgs]).then(resp2Reply);
  }

  scriptLoad(source: string): Promise<unknown> {
    return this.send('SCRIPT', ['LOAD', source]);
  }

  /**
   * Nothing to do: node-redis already writes together every command made before the event loop
   * turns (it queues them and writes the queue from a setImmediate, in one corked write).
   */
  batchWrites(): void {}

  /**
   * The commands sent one after the other in one go: node-redis queues them in order on this
   * connection and writes them together (see batchWrites), which is what a pipeline is.
   */
  pipeline(commands: readonly PipelineCommand[]): Promise<Outcome[]> {
    return outcomesOf(
      commands,
      commands.map(([name, ...args]) => this.send(name, args)),
    );
  }

  hget(key: string, field: string): Promise<string | null> {
    return this.send('HGET', [key, field]) as Promise<string | null>;
  }

  command(name: string, args: readonly RedisArg[]): Promise<unknown> {
    return this.send(name, args).then((reply) => resp2CommandReply(name, args, reply));
  }

  info(section: string): Promise<string> {
    return this.send('INFO', [section]) as Promise<string>;
  }

  ping(): Promise<unknown> {
    return this.send('PING', []);
  }
}

/** The port's client on a node-redis client: one per client (see nodeRedisServer). */
const servers = new WeakMap<NodeRedisClient, NodeRedisServer>();

/**
 * The port's command client on a node-redis client: the same object for the same client, so
 * that what is kept per client (a script being loaded) is kept once.
 */
export function nodeRedisServer(client: NodeRedisClient): NodeRedisServer {
  let server = servers.get(client);
  if (!server) servers.set(client, (server = new NodeRedisServer(client)));
  return server;
}
