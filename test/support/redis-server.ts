import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { existsSync } from 'node:fs';
import { Redis } from 'ioredis';
import {
  NO_PERSISTENCE,
  spawnRedisServer,
  type RedisProcess,
} from '../../tools/redis/redis-process';

export { freePort } from '../../tools/redis/redis-process';

/**
 * A Redis server for one test suite. Where it came from decides what a test can do to it:
 * `process` servers (a local redis-server the suite started) can be killed, paused and
 * restarted; `container` and `url` servers cannot.
 */
export interface TestRedis {
  readonly kind: 'process' | 'container' | 'url';
  readonly host: string;
  readonly port: number;
  readonly url: string;
  /** A new ioredis client on this server (the caller closes it). */
  client(): Redis;
  /** SIGKILL the server (data gone: it keeps nothing on disk). */
  kill(): Promise<void>;
  /** Start it again on the same port after kill(). */
  restart(): Promise<void>;
  /** SIGSTOP / SIGCONT the server process. */
  pause(): void;
  resume(): void;
  /** Stop it for good (no-op for a `url` server, which is flushed instead). */
  stop(): Promise<void>;
}

/**
 * Starts Redis for a suite: a testcontainers container when a Docker engine is reachable, the
 * server at REDIS_URL when that is set, else a local `redis-server` on a free loopback port.
 * Pass `{ control: true }` for fault-injection suites: they always get their own process.
 */
export async function startRedis(
  options: { control?: boolean; durable?: boolean } = {},
): Promise<TestRedis> {
  if (!options.control) {
    if (await dockerReachable()) return startContainer();
    if (process.env.REDIS_URL) return useUrl(process.env.REDIS_URL);
  }
  return startProcess(options.durable === true);
}

/**
 * A controllable local server. `durable`: an append-only file flushed on every write, in a
 * directory of its own, so a kill and restart keeps every acknowledged write (the data of a
 * Redis run with persistence); otherwise nothing is kept.
 */
async function startProcess(durable: boolean): Promise<TestRedis> {
  const persistence = durable
    ? [
        '--save',
        '',
        '--appendonly',
        'yes',
        '--appendfsync',
        'always',
        '--dir',
        mkdtempSync(join(tmpdir(), 'redis-durable-')),
      ]
    : NO_PERSISTENCE;
  const spawnServer = (port?: number) =>
    spawnRedisServer({
      port,
      args: [...persistence, '--protected-mode', 'no'],
      missingHint:
        'These tests need Redis and found none: no Docker engine for testcontainers, ' +
        'REDIS_URL is not set, and ',
    });
  let server: RedisProcess | undefined = await spawnServer();
  const { host, port, url } = server;
  return {
    kind: 'process',
    host,
    port,
    url,
    client: () => new Redis({ host, port, lazyConnect: false }),
    kill: async () => server?.stop(),
    async restart() {
      server = await spawnServer(port);
    },
    pause: () => server?.freeze(true),
    resume: () => server?.freeze(false),
    async stop() {
      await server?.stop();
      server = undefined;
    },
  };
}

function unsupported(kind: string, what: string): never {
  throw new Error(
    `A ${kind} Redis cannot be ${what}; start it with startRedis({ control: true }).`,
  );
}

function useUrl(url: string): TestRedis {
  const parsed = new URL(url);
  const host = parsed.hostname;
  const port = Number(parsed.port || 6379);
  return {
    kind: 'url',
    host,
    port,
    url,
    client: () => new Redis(url),
    kill: () => unsupported('REDIS_URL', 'killed'),
    restart: () => unsupported('REDIS_URL', 'restarted'),
    pause: () => unsupported('REDIS_URL', 'paused'),
    resume: () => unsupported('REDIS_URL', 'resumed'),
    stop: () => Promise.resolve(), // the server belongs to whoever set REDIS_URL
  };
}

async function dockerReachable(): Promise<boolean> {
  if (!process.env.DOCKER_HOST && !existsSync('/var/run/docker.sock')) return false;
  try {
    const { getContainerRuntimeClient } = await import('testcontainers');
    await getContainerRuntimeClient();
    return true;
  } catch {
    return false;
  }
}

async function startContainer(): Promise<TestRedis> {
  const { RedisContainer } = await import('@testcontainers/redis');
  const container = await new RedisContainer('redis:7').start();
  const host = container.getHost();
  const port = container.getPort();
  return {
    kind: 'container',
    host,
    port,
    url: container.getConnectionUrl(),
    client: () => new Redis({ host, port }),
    kill: () => unsupported('container', 'killed'),
    restart: () => unsupported('container', 'restarted'),
    pause: () => unsupported('container', 'paused'),
    resume: () => unsupported('container', 'resumed'),
    async stop() {
      await container.stop();
    },
  };
}
