import { ENGINE_OPTIONS, LockEngine, resolveOptions } from '../core';
import { LockError, LockRedisError, messageOf } from '../errors';
import { LockInspector } from '../inspector';
import { openConnections, ready, RedisStore, type RedisConnections } from '../stores/redis';
import { LIBRARY_VERSION } from '../version';
import { EXIT, parseCli, USAGE, UsageError, type CliCommand } from './cli-args';
import { formatClients, formatDescription, formatList, json } from './cli-format';

/** How long the CLI waits for Redis, ms. */
const CONNECT_TIMEOUT = 5_000;

/** Where the CLI writes. */
export interface CliOutput {
  out(text: string): void;
  err(text: string): void;
}

/**
 * Runs the CLI (`nestjs-redis-lock inspect|list|clients|unlock`) on `argv` (without `node` and
 * the script) and resolves its exit code (EXIT).
 */
export async function runCli(
  argv: readonly string[],
  env: NodeJS.ProcessEnv,
  output: CliOutput,
): Promise<number> {
  let command: CliCommand;
  try {
    command = parseCli(argv, env);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    output.err(`nestjs-redis-lock: ${error.message}\n\n${USAGE}`);
    return EXIT.usage;
  }
  if (command.command === 'help') {
    output.out(USAGE);
    return EXIT.ok;
  }
  if (command.command === 'version') {
    output.out(`${LIBRARY_VERSION}\n`);
    return EXIT.ok;
  }
  let connections: RedisConnections | undefined;
  try {
    connections = openConnections(
      command.cluster ? { cluster: { nodes: command.cluster } } : { redis: command.url },
    );
    await ready(connections.client, CONNECT_TIMEOUT).catch((error: unknown) => {
      throw new LockError(`Cannot reach Redis at ${connections!.address}: ${messageOf(error)}.`, {
        cause: error,
      });
    });
    const inspector = new LockInspector(connections.client, command.prefix);
    return await run(command, inspector, connections, output);
  } catch (error) {
    output.err(`nestjs-redis-lock: ${messageOf(error)}\n`);
    if (error instanceof LockRedisError || error instanceof LockError) return EXIT.redis;
    throw error;
  } finally {
    await connections?.close();
  }
}

async function run(
  command: CliCommand,
  inspector: LockInspector,
  connections: RedisConnections,
  output: CliOutput,
): Promise<number> {
  const print = (value: unknown, text: () => string) =>
    output.out(`${command.json ? json(value) : text()}\n`);
  switch (command.command) {
    case 'inspect': {
      const lock = await inspector.describe(command.argument!);
      print(lock, () => formatDescription(lock));
      return lock.kind === 'free' ? EXIT.notFound : EXIT.ok;
    }
    case 'list': {
      const locks = await inspector.list({ match: command.argument, limit: command.limit });
      print(locks, () => formatList(locks));
      return EXIT.ok;
    }
    case 'clients': {
      const clients = await inspector.clients({ limit: command.limit });
      print(clients, () => formatClients(clients));
      return EXIT.ok;
    }
    default: {
      const freed = await forceUnlock(command, inspector, connections);
      print({ key: command.argument, unlocked: freed }, () =>
        freed ? `unlocked ${command.argument}` : `${command.argument} was not held`,
      );
      return freed ? EXIT.ok : EXIT.notFound;
    }
  }
}

/**
 * LockService's forceUnlock on a store of the CLI's connection: a semaphore's permits, or
 * whatever lock lives under the key (its waiters are woken, as from an application).
 */
async function forceUnlock(
  command: CliCommand,
  inspector: LockInspector,
  connections: RedisConnections,
): Promise<boolean> {
  const key = command.argument!;
  const store = new RedisStore(connections);
  await store.connect(CONNECT_TIMEOUT);
  const engine = new LockEngine({
    ...resolveOptions(ENGINE_OPTIONS, { keyPrefix: command.prefix }),
    store,
    logger: { warn: () => undefined, debug: () => undefined },
  });
  try {
    const { kind } = await inspector.describe(key);
    return kind === 'semaphore'
      ? await engine.semaphore(key, { permits: 1 }).forceUnlock()
      : await engine.forceUnlock(key);
  } finally {
    await engine.close();
  }
}
