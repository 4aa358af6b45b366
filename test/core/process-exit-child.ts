/**
 * A process whose only pending work is lock work (test/core/process-exit.spec.ts): it holds
 * locks of each kind with another caller waiting on each, reports its ref'd timers, then ends
 * its own work. It must exit by itself.
 */
import { MemoryLockStore } from '../../lib/stores/memory/memory-store';
import { openStore } from '../../lib/nest/open-store';
import { testEngine } from './engine-kit';

async function main(): Promise<void> {
  const store = openStore({ store: new MemoryLockStore(), syncTimeout: 1_000 }, () => undefined);
  const engine = testEngine(store, {
    keyPrefix: '',
    waitTime: 60_000,
    onLockLost: 'ignore',
    fairQueueTimeout: 60_000,
  });
  // Held: watchdog-renewed, with an explicit lease, fair, write, a permit, a multi-lock.
  await engine.acquire('plain');
  await engine.acquire('leased', { leaseTime: 20_000 });
  await engine.acquire('fair', { fair: true });
  await engine.acquire('rw', { mode: 'write' });
  await engine.semaphore('sem', { permits: 1 }).acquire();
  await engine.acquire(['m1', 'm2']);
  // Each with another caller waiting (another call chain: these wait, never re-enter).
  const waiting = [
    engine.detach(() => engine.acquire('plain')),
    engine.detach(() => engine.acquire('leased')),
    engine.detach(() => engine.acquire('fair', { fair: true })),
    engine.detach(() => engine.acquire('rw', { mode: 'read' })),
    engine.detach(() => engine.semaphore('sem', { permits: 1 }).acquire()),
    engine.detach(() => engine.acquire(['m2', 'm3'])),
  ];
  waiting.forEach((wait) => void wait.catch(() => undefined));
  // Let the waiters make their attempts and queue.
  for (let i = 0; i < 20; i++) await new Promise((resolve) => setImmediate(resolve));
  const timers = process.getActiveResourcesInfo().filter((resource) => resource === 'Timeout');
  process.stdout.write(`held, waiting; ref'd timers: ${timers.length}\n`);
  process.on('exit', () => process.stdout.write('exited\n'));
}

void main();
