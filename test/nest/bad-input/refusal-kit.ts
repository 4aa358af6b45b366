import type { Redis } from 'ioredis';

/** How many times a locked body ran: bad input must never start one. */
export const bodies = { runs: 0 };

/**
 * After each test of the enclosing block: no locked body ran (the count is reset) and no key
 * under the app's prefix is left in Redis.
 */
export function nothingRanNorLeft(raw: () => Redis, prefix: () => string): void {
  afterEach(async () => {
    const runs = bodies.runs;
    bodies.runs = 0;
    expect(runs).toBe(0);
    expect(await raw().keys(`${prefix()}*`)).toEqual([]);
  });
}
