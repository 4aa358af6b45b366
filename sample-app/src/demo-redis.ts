import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:net';
import { Redis } from 'ioredis';

/** The Redis the demo runs against, and how to let go of it. */
export interface DemoRedis {
  url: string;
  /** Where it came from, for the report. */
  origin: string;
  /** Stops the server when the demo started it; otherwise does nothing. */
  stop(): Promise<void>;
}

const DEFAULT_URL = 'redis://127.0.0.1:6379';

/**
 * REDIS_URL when set (it must answer PING), else the server on 127.0.0.1:6379 when one
 * answers, else a throw-away `redis-server` (no persistence) on a free loopback port, else
 * an error that says what to do. `ownServer` skips the 6379 probe.
 */
export async function resolveRedis(options: { ownServer?: boolean } = {}): Promise<DemoRedis> {
  const fromEnv = process.env.REDIS_URL;
  if (fromEnv) {
    const failure = await ping(fromEnv, 3_000);
    if (failure) throw new Error(`REDIS_URL=${fromEnv} does not answer PING (${failure}).`);
    return { url: fromEnv, origin: 'REDIS_URL', stop: () => Promise.resolve() };
  }
  if (!options.ownServer && (await ping(DEFAULT_URL, 1_000)) === undefined) {
    return { url: DEFAULT_URL, origin: 'server already running', stop: () => Promise.resolve() };
  }
  return startRedisServer(options.ownServer ? '' : `nothing answers on ${DEFAULT_URL}, `);
}

/** PINGs `url` once; undefined on success, else why it failed. */
async function ping(url: string, timeout: number): Promise<string | undefined> {
  const client = new Redis(url, {
    lazyConnect: true,
    connectTimeout: timeout,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
  });
  let lastError: Error | undefined;
  client.on('error', (error: Error) => {
    lastError = error;
  });
  try {
    await client.connect();
    return (await client.ping()) === 'PONG' ? undefined : 'unexpected reply';
  } catch (error) {
    // ioredis rejects with "Connection is closed" and emits the cause (ECONNREFUSED…) as 'error'.
    return (lastError ?? (error instanceof Error ? error : new Error(String(error)))).message;
  } finally {
    client.disconnect();
  }
}

async function startRedisServer(alsoTried: string): Promise<DemoRedis> {
  const binary = process.env.REDIS_SERVER_BIN ?? 'redis-server';
  const port = await freePort();
  const url = `redis://127.0.0.1:${port}`;
  const child = spawn(
    binary,
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
    { stdio: 'ignore' },
  );
  const spawnError = once(child, 'spawn').then(
    () => undefined,
    (error: Error) => error,
  );
  const killOnExit = () => child.kill('SIGKILL');
  process.once('exit', killOnExit);
  const stop = async () => {
    process.removeListener('exit', killOnExit);
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = once(child, 'exit');
    child.kill('SIGTERM');
    await exited;
  };

  const error = await spawnError;
  if (error) {
    process.removeListener('exit', killOnExit);
    throw new Error(
      `No Redis to run the demo against: REDIS_URL is not set, ${alsoTried}` +
        `and "${binary}" could not be started (${error.message}). Install Redis ` +
        '(apt-get install redis-server, brew install redis), start one, or set REDIS_URL=redis://host:port.',
    );
  }
  const deadline = Date.now() + 10_000;
  for (;;) {
    if ((await ping(url, 500)) === undefined) break;
    if (exitedEarly(child) || Date.now() > deadline) {
      await stop();
      throw new Error(`"${binary}" on port ${port} did not answer PING within 10 s.`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return { url, origin: `redis-server started by the demo (pid ${child.pid})`, stop };
}

function exitedEarly(child: ChildProcess): boolean {
  return child.exitCode !== null || child.signalCode !== null;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}
