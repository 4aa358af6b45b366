/**
 * A lock user in its own process, on a Redis Cluster. argv = nodes (comma-separated ports),
 * key prefix, mode, key, then the mode's argument:
 * - `count <n>`: n locked GET-then-SET increments of `{key}:counter` (a lost update shows as a
 *   final count below the sum), then prints "done".
 * - `wait <ms>`: prints "waiting", acquires `key` waiting up to ms, prints "acquired", releases.
 */
import 'reflect-metadata';
import { Cluster } from 'ioredis';
import { childApp } from '../../../support/child-app';

async function main() {
  const [ports, prefix, mode, key, arg] = process.argv.slice(2);
  const nodes = ports.split(',').map((port) => ({ host: '127.0.0.1', port: Number(port) }));
  const { app, locks } = await childApp({ cluster: { nodes }, keyPrefix: prefix });
  if (mode === 'count') {
    const data = new Cluster(nodes);
    const counter = `${prefix}{${key}}:counter`;
    for (let i = 0; i < Number(arg); i++) {
      await locks.run(key, async () => {
        const value = Number((await data.get(counter)) ?? 0);
        await new Promise((resolve) => setImmediate(resolve));
        await data.set(counter, value + 1);
      });
    }
    data.disconnect();
  } else {
    process.stdout.write('waiting\n');
    const lock = await locks.acquire(key, { waitTime: Number(arg) });
    process.stdout.write('acquired\n');
    await lock.release();
  }
  process.stdout.write('done\n');
  await app.close();
}

main().catch((error: unknown) => {
  process.stderr.write(`${String(error)}\n`);
  process.exit(1);
});
