/**
 * The one place that starts `redis-server` processes: for the test suites (single server,
 * Cluster, Sentinel), the benchmark and the sample app's demo. Servers run as child processes
 * (never daemonized) on loopback, and every one still running when Node exits is SIGKILLed.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createServer, type Server } from 'node:net';
import { Redis } from 'ioredis';

/** Where every server started here listens. */
export const LOOPBACK = '127.0.0.1';

/** Arguments that keep a server off the disk: no RDB snapshots, no AOF. */
export const NO_PERSISTENCE: readonly string[] = ['--save', '', '--appendonly', 'no'];

/** A `redis-server` child process started by spawnRedisServer. */
export interface RedisProcess {
  readonly host: string;
  readonly port: number;
  readonly pid: number;
  readonly url: string;
  /** Whether the process is still running. */
  alive(): boolean;
  /** Sends `signal` (default SIGKILL; a stopped process is continued first) and awaits the exit. */
  stop(signal?: NodeJS.Signals): Promise<void>;
  /** SIGSTOP (`true`) or SIGCONT (`false`) the process. */
  freeze(frozen: boolean): void;
}

/** How to start one server. */
export interface RedisProcessOptions {
  /** Port to listen on; a free one when omitted. */
  port?: number;
  /** A config file, passed as the first argument (Sentinel needs one it can rewrite). */
  configFile?: string;
  /** Further arguments after `--port` and `--bind`, e.g. NO_PERSISTENCE. */
  args?: readonly string[];
  /** Working directory of the process. */
  cwd?: string;
  /** Prefix for the error thrown when the binary cannot be started (why Redis was needed). */
  missingHint?: string;
}

/** The binary to run: REDIS_SERVER_BIN, else `redis-server` from PATH. */
export function redisServerBinary(): string {
  return process.env.REDIS_SERVER_BIN ?? 'redis-server';
}

const exitCleanups = new Set<() => void>();
const runCleanups = () => exitCleanups.forEach((cleanup) => cleanup());

/**
 * Runs `cleanup` (synchronous) when the Node process exits, unless the returned function was
 * called first. One `exit` listener serves all of them.
 */
export function cleanupOnExit(cleanup: () => void): () => void {
  if (exitCleanups.size === 0) process.on('exit', runCleanups);
  exitCleanups.add(cleanup);
  return () => {
    exitCleanups.delete(cleanup);
    if (exitCleanups.size === 0) process.removeListener('exit', runCleanups);
  };
}

const listen = (port: number) =>
  new Promise<Server | undefined>((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(undefined));
    server.listen(port, LOOPBACK, () => resolve(server));
  });

const close = (server: Server) => new Promise<void>((resolve) => server.close(() => resolve()));

/**
 * `count` distinct free loopback ports. With `alsoFree`, port+alsoFree must be free too
 * (Redis Cluster's bus port is port+10000). All are held until every one is found.
 */
export async function freePorts(count: number, alsoFree?: number): Promise<number[]> {
  const held: Server[] = [];
  const ports: number[] = [];
  try {
    for (let attempt = 0; ports.length < count; attempt++) {
      if (attempt > 100 * count) throw new Error(`found only ${ports.length} of ${count} ports`);
      const server = await listen(0);
      if (!server) continue;
      held.push(server);
      const { port } = server.address() as { port: number };
      if (alsoFree === undefined) {
        ports.push(port);
        continue;
      }
      const partner = port + alsoFree <= 65535 ? await listen(port + alsoFree) : undefined;
      if (!partner) continue;
      held.push(partner);
      ports.push(port);
    }
    return ports;
  } finally {
    await Promise.all(held.map(close));
  }
}

/** One free loopback port. */
export async function freePort(): Promise<number> {
  return (await freePorts(1))[0];
}

/** PINGs the server at `url` once; undefined when it answered PONG, else why it did not. */
export async function ping(url: string, timeout: number): Promise<string | undefined> {
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
    // A client that already gave up (status 'end') has no socket to close: disconnect() would
    // arm ioredis' 2 s close timer on it, which keeps the process alive (Jest "did not exit").
    if (client.status !== 'end') client.disconnect();
  }
}

const exited = (child: ChildProcess) => child.exitCode !== null || child.signalCode !== null;

/**
 * Starts `redis-server` on loopback and resolves once it answers PING (within 10 s). Rejects
 * with a message saying how to get Redis when the binary cannot be run, and with the
 * server's last output when it exits early (e.g. its port was taken).
 */
export async function spawnRedisServer(options: RedisProcessOptions = {}): Promise<RedisProcess> {
  const binary = redisServerBinary();
  const port = options.port ?? (await freePort());
  const argv = [
    ...(options.configFile ? [options.configFile] : []),
    ...['--port', String(port), '--bind', LOOPBACK],
    ...(options.args ?? []),
  ];
  const child = spawn(binary, argv, { cwd: options.cwd, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const keep = (chunk: Buffer) => {
    output = (output + chunk.toString()).slice(-2000);
  };
  child.stdout.on('data', keep);
  child.stderr.on('data', keep);
  const forget = cleanupOnExit(() => child.kill('SIGKILL'));
  const gone = once(child, 'exit').then(forget, forget);
  const spawnError = await once(child, 'spawn').then(
    () => undefined,
    (error: Error) => error,
  );
  child.on('error', () => undefined); // a signal to a process that is already gone
  if (spawnError) {
    forget();
    throw new Error(
      `${options.missingHint ?? ''}"${binary}" could not be started (${spawnError.message}). ` +
        'Install Redis (apt-get install redis-server, brew install redis), set REDIS_SERVER_BIN ' +
        'to its path, or set REDIS_URL=redis://host:port.',
    );
  }
  const server: RedisProcess = {
    host: LOOPBACK,
    port,
    pid: child.pid!,
    url: `redis://${LOOPBACK}:${port}`,
    alive: () => !exited(child),
    async stop(signal = 'SIGKILL') {
      if (exited(child)) return;
      child.kill('SIGCONT');
      child.kill(signal);
      await gone;
    },
    freeze: (frozen) => void child.kill(frozen ? 'SIGSTOP' : 'SIGCONT'),
  };
  const deadline = Date.now() + 10_000;
  for (;;) {
    const failure = await ping(server.url, 500);
    if (failure === undefined) return server;
    if (exited(child) || Date.now() > deadline) {
      await server.stop();
      throw new Error(
        `"${binary} ${argv.join(' ')}" did not answer PING (${failure}); it said:\n${output}`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
