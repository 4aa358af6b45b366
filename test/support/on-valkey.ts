/**
 * The Valkey project's setup (jest.config.cjs): its suites start `valkey-server` (every spawn in
 * tools/redis reads REDIS_SERVER_BIN) where the others start `redis-server`, and run on the Redis
 * store only (the memory store's rows run in the Redis project).
 */
import { spawnSync } from 'node:child_process';

const binary = process.env.VALKEY_SERVER_BIN ?? 'valkey-server';
const version = spawnSync(binary, ['--version'], { encoding: 'utf8' }).stdout ?? '';
if (!version.startsWith('Valkey server')) {
  throw new Error(`The Valkey project needs Valkey, but "${binary} --version" said: ${version}`);
}
process.env.REDIS_SERVER_BIN = binary;
process.env.LOCK_TEST_SERVER = 'valkey';
