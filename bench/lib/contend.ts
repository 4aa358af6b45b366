import type { Redis } from 'ioredis';
import type { Adapter } from './adapters';
import { nowUs } from './stats';
import { sleep } from '../../tools/time';

/** What one contention run measured. */
export interface ContentionResult {
  sections: number;
  handoffs: number;
  violations: number;
  perWorker: number[];
  waitsUs: number[];
}

/**
 * `workers` loops on one lock for `durationMs`: each critical section checks nobody else is
 * inside (SET NX), notes the previous owner (GETSET: a different one is a handoff) and does a
 * GET-then-SET increment of a counter (a lost update would show as a final counter mismatch).
 */
export async function contend(
  adapter: Adapter,
  redis: Redis,
  keys: { lock: string; state: string },
  workerIds: string[],
  durationMs: number,
  startAt = Date.now(),
): Promise<ContentionResult> {
  const result: ContentionResult = {
    sections: 0,
    handoffs: 0,
    violations: 0,
    perWorker: workerIds.map(() => 0),
    waitsUs: [],
  };
  await sleep(Math.max(0, startAt - Date.now()));
  const endAt = startAt + durationMs;
  await Promise.all(
    workerIds.map(async (id, index) => {
      while (Date.now() < endAt) {
        const asked = nowUs();
        await adapter.locked(keys.lock, async () => {
          result.waitsUs.push(nowUs() - asked);
          if ((await redis.set(`${keys.state}:inside`, id, 'NX')) !== 'OK') result.violations++;
          const previous = await redis.getset(`${keys.state}:owner`, id);
          if (previous !== null && previous !== id) result.handoffs++;
          const value = Number((await redis.get(`${keys.state}:counter`)) ?? 0);
          await redis.set(`${keys.state}:counter`, value + 1);
          await redis.del(`${keys.state}:inside`);
        });
        result.sections++;
        result.perWorker[index]++;
      }
    }),
  );
  return result;
}
