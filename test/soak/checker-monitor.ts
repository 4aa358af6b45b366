/**
 * The family checker's observer: polls every resource on Redis directly (a client of its own,
 * never faulted on purpose) and records the stretches in which a resource was free at every
 * poll: no lock key for a lock, fewer live permits than the semaphore's limit.
 */
import type { Cluster, Redis } from 'ioredis';
import { permitsName } from '../../lib/stores/redis/redis-names';
import { micros } from './soak-records';
import { CHECKER_RESOURCES, SEM, SEMAPHORE_PERMITS, type FreeStretch } from './checker-records';
import { sleep } from '../../tools/time';

/** Pause between polls, ms. */
const POLL_PERIOD = 20;
/** Longest gap between two answered polls that still continues a free stretch, µs. */
const MAX_GAP = 100_000;
/** A poll not answered within this is no answer, ms. */
const POLL_TIMEOUT = 300;

/** Live permits (lease end after Redis' now, in ms) of a semaphore's zset. */
const LIVE_PERMITS = `
local t = redis.call('time')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
return redis.call('zcount', KEYS[1], '(' .. now, '+inf')`;

/** Whether each resource is free now, or undefined when Redis did not answer in time. */
async function probe(client: Redis | Cluster, prefix: string): Promise<boolean[] | undefined> {
  const asks = CHECKER_RESOURCES.map((resource, r) => {
    const name = `${prefix}:${resource}`;
    return r === SEM
      ? (client.eval(LIVE_PERMITS, 1, permitsName(name)) as Promise<number>).then(
          (live) => live < SEMAPHORE_PERMITS,
        )
      : client.exists(name).then((n) => n === 0);
  });
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => resolve(undefined), POLL_TIMEOUT);
  });
  try {
    return await Promise.race([Promise.all(asks), late]);
  } catch {
    return undefined;
  } finally {
    clearTimeout(timer);
  }
}

/** Polls until stopped; `stop()` resolves the free stretches. The caller owns `client`. */
export function monitorResources(
  client: Redis | Cluster,
  prefix: string,
): { stop(): Promise<FreeStretch[]> } {
  const stretches: FreeStretch[] = [];
  /** Per resource: the open free stretch [from, last free poll sent]. */
  const open: ([number, number] | undefined)[] = CHECKER_RESOURCES.map(() => undefined);
  let stopped = false;
  const close = (r: number) => {
    const run = open[r];
    if (run && run[1] > run[0]) stretches.push([r, run[0], run[1]]);
    open[r] = undefined;
  };
  const loop = (async () => {
    while (!stopped) {
      const sent = micros();
      const free = await probe(client, prefix);
      const answered = micros();
      CHECKER_RESOURCES.forEach((_, r) => {
        const run = open[r];
        if (free === undefined || !free[r] || (run && answered - run[1] > MAX_GAP)) close(r);
        // Free at some moment in [sent, answered]: claimed from `answered` on, up to `sent`.
        if (free?.[r]) {
          const current = open[r];
          if (current) current[1] = sent;
          else open[r] = [answered, answered];
        }
      });
      await sleep(POLL_PERIOD);
    }
  })();
  return {
    async stop() {
      stopped = true;
      await loop;
      CHECKER_RESOURCES.forEach((_, r) => close(r));
      return stretches;
    },
  };
}
