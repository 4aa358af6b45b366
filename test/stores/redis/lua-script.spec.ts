import type { Redis } from 'ioredis';
import { LuaScript } from '../../../lib/stores/redis/lua-script';
import { suiteRedis } from '../../support/suite-redis';
import { ioredisClient } from '../../../lib/stores/redis/client/ioredis';

describe('LuaScript: a call that meets NOSCRIPT is answered, never refused', () => {
  const server = suiteRedis();
  let n = 0;

  /** A new client whose SCRIPT LOAD is followed by a SCRIPT FLUSH from another client. */
  function flushingAfterLoad(): { client: Redis; loads: () => number } {
    const client = server.redis.client();
    const load = client.script.bind(client) as (...args: unknown[]) => Promise<unknown>;
    let loads = 0;
    (client as unknown as { script: (...args: unknown[]) => Promise<unknown> }).script = async (
      ...args: unknown[]
    ) => {
      const sha = await load(...args);
      loads++;
      await server.raw.script('FLUSH');
      return sha;
    };
    return { client, loads: () => loads };
  }

  it('runs a script Redis does not know (loaded, then called by SHA)', async () => {
    const script = new LuaScript(`return 'first use ${++n}'`);
    const client = server.redis.client();
    try {
      await server.raw.script('FLUSH');
      expect(await script.run(ioredisClient(client), 0)).toBe(`first use ${n}`);
      expect(await server.raw.script('EXISTS', script.sha)).toEqual([1]);
    } finally {
      client.disconnect();
    }
  });

  it('runs it although the script is flushed again between its SCRIPT LOAD and the EVALSHA', async () => {
    const script = new LuaScript(`return redis.call('incr', KEYS[1])`);
    const { client, loads } = flushingAfterLoad();
    const key = `lua-script:${++n}`;
    const rethrow = (error: unknown): never => {
      throw error;
    };
    try {
      await server.raw.script('FLUSH');
      expect(await script.run(ioredisClient(client), 1, key)).toBe(1);
      await server.raw.script('FLUSH'); // the EVAL above left the script known
      expect(
        await script.call(ioredisClient(client), (reply) => Number(reply) * 10, rethrow, 1, key),
      ).toBe(20);
      expect(loads()).toBe(2); // each call met NOSCRIPT, loaded the script, and met it again
      expect(await server.raw.get(key)).toBe('2'); // each ran once
    } finally {
      client.disconnect();
    }
  });
});
