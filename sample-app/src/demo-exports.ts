import { setTimeout as sleep } from 'node:timers/promises';
import { count, get, ms, ok, post, statusLine, timed, type Check } from './demo-http';
import type { ExportReply } from './exports.controller';
import { EXPORT_MS, EXPORT_PERMITS } from './exports.service';

const EXPORTS = 8;
/** How often the demo asks for the free permits while the exports run, ms. */
const SAMPLE_EVERY = 15;

interface Permits {
  permits: number;
  available: number;
}

/**
 * Demo part 5, the semaphore `export:orders` (`@Semaphore`, 2 permits): 8 exports fired at
 * once. At most 2 run at the same time, the others wait for a permit; meanwhile the demo
 * samples `GET /exports/permits` (the semaphore's available()). Every export must succeed,
 * never more than 2 at once, some must have waited, and every permit must be back at the end.
 */
export async function limitExports(base: string, check: Check, orders: number): Promise<string> {
  let running = true;
  const samples: number[] = [];
  const sampling = (async () => {
    while (running) {
      samples.push((await get<Permits>(`${base}/exports/permits`)).body.available);
      await sleep(SAMPLE_EVERY);
    }
  })();
  const burst = await timed(async () => {
    try {
      return await Promise.all(
        Array.from({ length: EXPORTS }, () => post<ExportReply>(`${base}/exports/orders`)),
      );
    } finally {
      running = false;
    }
  });
  await sampling;
  const after = (await get<Permits>(`${base}/exports/permits`)).body;
  const replies = burst.result;
  const exports = ok(replies);
  const mostAtOnce = Math.max(0, ...exports.map((reply) => reply.exportsAtOnce));
  const waited = exports.filter((reply) => reply.waitedMs >= EXPORT_MS);
  const longestWait = Math.max(0, ...exports.map((reply) => reply.waitedMs));
  const wrongRows = exports.filter((reply) => reply.rows !== orders).length;

  console.log(
    `5) ${EXPORTS} concurrent POST /exports/orders (@Semaphore, ${EXPORT_PERMITS} permits, ` +
      `${EXPORT_MS} ms each)`,
  );
  console.log(
    `   ${statusLine(replies)} in ${ms(burst.ms)}; at most ${mostAtOnce} running at once; ` +
      `${waited.length} waited ${ms(EXPORT_MS)} or more for a permit (longest ${ms(longestWait)}); ` +
      `${exports.length - wrongRows} of ${exports.length} exports had all ${orders} orders`,
  );
  console.log(
    `   GET /exports/permits (available()) during the burst: ${samples.length} samples, ` +
      `${Math.min(...samples)} to ${Math.max(...samples)} free; after it: ` +
      `${after.available} of ${after.permits} free`,
  );

  check(
    count(replies, 200) === EXPORTS,
    `exports: expected ${EXPORTS} x 200, got ${statusLine(replies)}`,
  );
  check(
    mostAtOnce <= EXPORT_PERMITS,
    `exports: ${mostAtOnce} ran at once, more than the ${EXPORT_PERMITS} permits`,
  );
  check(
    waited.length > 0,
    `exports: none waited ${ms(EXPORT_MS)} for a permit, so the limit was never reached`,
  );
  check(wrongRows === 0, `exports: ${wrongRows} exports did not have all ${orders} orders`);
  check(
    after.available === EXPORT_PERMITS,
    `exports: ${after.available} of ${EXPORT_PERMITS} permits free after the burst`,
  );
  return `${EXPORTS} exports, at most ${mostAtOnce} of ${EXPORT_PERMITS} at once`;
}
