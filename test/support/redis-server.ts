import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createServer } from 'node:net';
import { Redis } from 'ioredis';

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
export async function startRedis(options: { control?: boolean } = {}): Promise<TestRedis> {
  if (!options.control) {
    if (await dockerReachable()) return startContainer();
    if (process.env.REDIS_URL) return useUrl(process.env.REDIS_URL);
  }
  return startProcess();
}

function redisServerBinary(): string {
  const binary = process.env.REDIS_SERVER_BIN ?? 'redis-server';
  const found = spawnSync(binary, ['--version'], { encoding: 'utf8' });
  if (found.error || found.status !== 0) {
    throw new Error(
      `These tests need Redis and found none: no Docker engine for testcontainers, REDIS_URL is ` +
        `not set, and "${binary}" is not on PATH. Install it (apt-get install redis-server), set ` +
        'REDIS_SERVER_BIN to its path, or set REDIS_URL=redis://host:port.',
    );
  }
  return binary;
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

async function startProcess(): Promise<TestRedis> {
  const binary = redisServerBinary();
  const host = '127.0.0.1';
  const port = await freePort();
  let child: ChildProcess | undefined;
  const launch = async () => {
    child = spawn(
      binary,
      [
        '--port',
        String(port),
        '--bind',
        host,
        '--save',
        '',
        '--appendonly',
        'no',
        '--protected-mode',
        'no',
      ],
      { stdio: 'ignore' },
    );
    await waitForPing(host, port);
  };
  const exited = (proc: ChildProcess) =>
    new Promise<void>((resolve) => {
      if (proc.exitCode !== null || proc.signalCode !== null) resolve();
      else proc.once('exit', () => resolve());
    });
  await launch();
  return {
    kind: 'process',
    host,
    port,
    url: `redis://${host}:${port}`,
    client: () => new Redis({ host, port, lazyConnect: false }),
    async kill() {
      if (!child) return;
      const proc = child;
      proc.kill('SIGCONT');
      proc.kill('SIGKILL');
      await exited(proc);
    },
    restart: launch,
    pause: () => child?.kill('SIGSTOP'),
    resume: () => child?.kill('SIGCONT'),
    async stop() {
      if (!child) return;
      const proc = child;
      proc.kill('SIGCONT');
      proc.kill('SIGKILL');
      await exited(proc);
      child = undefined;
    },
  };
}

async function waitForPing(host: string, port: number): Promise<void> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const probe = new Redis({
      host,
      port,
      lazyConnect: true,
      maxRetriesPerRequest: 0,
      retryStrategy: () => null,
    });
    probe.on('error', () => undefined);
    try {
      await probe.connect();
      await probe.ping();
      return;
    } catch (error) {
      if (Date.now() > deadline)
        throw new Error(`redis-server on ${host}:${port} did not start: ${String(error)}`);
      await new Promise((resolve) => setTimeout(resolve, 25));
    } finally {
      probe.disconnect();
    }
  }
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
