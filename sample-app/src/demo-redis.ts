import { NO_PERSISTENCE, ping, spawnRedisServer } from '../../tools/redis/redis-process';

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
  const tried = options.ownServer ? '' : `nothing answers on ${DEFAULT_URL}, `;
  const server = await spawnRedisServer({
    args: NO_PERSISTENCE,
    missingHint: `No Redis to run the demo against: REDIS_URL is not set, ${tried}and `,
  });
  return {
    url: server.url,
    origin: `redis-server started by the demo (pid ${server.pid})`,
    stop: () => server.stop('SIGTERM'),
  };
}
