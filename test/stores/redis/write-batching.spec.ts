import type { Socket } from 'node:net';
import { LuaScript } from '../../../lib/stores/redis/lua-script';
import { suiteRedis } from '../../support/suite-redis';
import { CALLS_PER_WRITE, ioredisClient } from '../../../lib/stores/redis/client/ioredis';

/** Counts the writes (write and writev system calls) `socket` makes until `restore()`. */
function countWrites(socket: Socket): { readonly count: number; restore(): void } {
  const writable = socket as unknown as Record<'_write' | '_writev', (...args: unknown[]) => void>;
  const originals = { _write: writable._write, _writev: writable._writev };
  let count = 0;
  for (const name of ['_write', '_writev'] as const) {
    writable[name] = function (this: unknown, ...args: unknown[]) {
      count++;
      return originals[name].apply(this, args);
    };
  }
  return {
    get count() {
      return count;
    },
    restore() {
      writable._write = originals._write;
      writable._writev = originals._writev;
    },
  };
}

describe('script calls made together reach Redis in few writes, in order', () => {
  const server = suiteRedis();
  const incr = new LuaScript("return redis.call('incr', KEYS[1])");
  let writes: ReturnType<typeof countWrites>;
  let n = 0;
  const key = () => `batch:${++n}`;
  beforeAll(() => incr.run(ioredisClient(server.raw), 1, 'warm-up')); // loaded: no NOSCRIPT retries below
  beforeEach(() => (writes = countWrites(server.raw.stream)));
  afterEach(() => {
    writes.restore();
    jest.useRealTimers();
  });

  // The first call finds Redis idle and goes out at once; the 39 made while it is in flight go
  // out CALLS_PER_WRITE at a time.
  const expected = 1 + Math.ceil(39 / CALLS_PER_WRITE);

  it(`sends 40 calls made in one go in ${expected} writes, answered in order`, async () => {
    const name = key();
    const replies = await Promise.all(
      Array.from({ length: 40 }, () => incr.run(ioredisClient(server.raw), 1, name)),
    );
    expect(replies).toEqual(Array.from({ length: 40 }, (_, i) => i + 1));
    expect(writes.count).toBe(expected);
  });

  it('sends a call made while Redis is idle at once, within the call', async () => {
    const name = key();
    const first = incr.run(ioredisClient(server.raw), 1, name);
    expect(writes.count).toBe(1);
    await first;
    const second = incr.run(ioredisClient(server.raw), 1, name);
    expect(writes.count).toBe(2);
    expect(await second).toBe(2);
  });

  it('sends calls held for a batch under fake timers too (no timer or nextTick sends them)', async () => {
    jest.useFakeTimers();
    const name = key();
    const replies = await Promise.all(
      [1, 2, 3].map(() => incr.run(ioredisClient(server.raw), 1, name)),
    );
    expect(replies).toEqual([1, 2, 3]);
    expect(writes.count).toBe(2);
  });
});
