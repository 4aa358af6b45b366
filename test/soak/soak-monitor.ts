/**
 * The soak's lock observer: polls the lock keys on the lock's Redis directly (not through the
 * fault proxy) and records the stretches in which a key was absent at every poll, for the
 * stuck-waiter check (soak-analysis.ts checkWaits).
 */
import { Redis } from 'ioredis';
import { micros, type FreeRun } from './soak-records';
import { sleep } from '../../tools/time';

/** Pause between polls, ms. */
const POLL_PERIOD = 20;
/** Longest gap between two answered polls that still continues a free stretch, µs. */
const MAX_GAP = 100_000;

/** Polls `names` (lock keys, index = key number) until stopped; `stop()` resolves the free stretches. */
export function monitorLocks(port: number, names: string[]): { stop(): Promise<FreeRun[]> } {
  const client = new Redis({
    host: '127.0.0.1',
    port,
    retryStrategy: () => 50,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    commandTimeout: 200,
  });
  client.on('error', () => undefined); // the soak kills and pauses this server
  const runs: FreeRun[] = [];
  /** Per key: the open free stretch [from, last answered free poll]. */
  const open: ([number, number] | undefined)[] = names.map(() => undefined);
  let stopped = false;
  const close = (k: number) => {
    const run = open[k];
    if (run && run[1] > run[0]) runs.push([k, run[0], run[1]]);
    open[k] = undefined;
  };
  const loop = (async () => {
    while (!stopped) {
      const sent = micros();
      const present = await Promise.all(names.map((n) => client.exists(n))).catch(() => undefined);
      const answered = micros();
      names.forEach((_, k) => {
        const run = open[k];
        if (present === undefined || present[k] !== 0 || (run && answered - run[1] > MAX_GAP)) {
          close(k);
        }
        // Free at some moment in [sent, answered]: the stretch is claimed from `answered` on, up to `sent`.
        if (present !== undefined && present[k] === 0) {
          const current = open[k];
          if (current) current[1] = sent;
          else open[k] = [answered, answered];
        }
      });
      await sleep(POLL_PERIOD);
    }
  })();
  return {
    async stop() {
      stopped = true;
      await loop;
      names.forEach((_, k) => close(k));
      client.disconnect();
      return runs;
    },
  };
}
