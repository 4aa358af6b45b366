/**
 * Child process of holder-killed.spec.ts: takes one lock through the public API and holds it
 * until killed. argv: redisUrl keyPrefix key leaseTime ['explicit'] — with 'explicit' the lock
 * gets an explicit lease of leaseTime ms, else the watchdog renews a lease of leaseTime ms.
 * Prints `held <fencing token>` once it holds the lock.
 */
import 'reflect-metadata';
import { childApp } from '../support/child-app';

async function main() {
  const [url, keyPrefix, key, leaseTime, mode] = process.argv.slice(2);
  const { locks } = await childApp({
    redis: url,
    keyPrefix,
    leaseTime: Number(leaseTime),
    fencing: true,
  });
  const lock = await locks.acquire(
    key,
    mode === 'explicit' ? { leaseTime: Number(leaseTime) } : undefined,
  );
  process.stdout.write(`held ${lock.fencingToken}\n`);
  setInterval(() => undefined, 60_000); // stay alive until killed
}

main().catch((error: unknown) => {
  process.stderr.write(`holder-child failed: ${String(error)}\n`);
  process.exit(1);
});
