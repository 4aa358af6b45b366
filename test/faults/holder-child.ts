/** Child process for the SIGKILL test: takes a lock (watchdog lease from argv) and holds it forever. */
import 'reflect-metadata';
import { Redis } from 'ioredis';
import { LockEngine } from '../../lib/engine/lock-engine';

async function main() {
  const [url, key, leaseTime] = process.argv.slice(2);
  const client = new Redis(url);
  const subscriber = new Redis(url);
  for (const connection of [client, subscriber]) connection.on('error', () => undefined);
  const engine = new LockEngine({
    client,
    subscriber,
    keyPrefix: '',
    leaseTime: Number(leaseTime),
    waitTime: 5_000,
    fencing: true,
    onLockLost: 'throw',
    logger: console,
  });
  await engine.acquire(key);
  process.stdout.write('held\n');
  setInterval(() => undefined, 1_000); // stay alive until killed
}

void main();
