import type { Redis } from 'ioredis';
import { suiteRedis } from '../../../support/suite-redis';
import { Listener, rwLock } from './script-kit';

/** What scriptSuite() gives a script spec; read its fields inside hooks and tests. */
export interface ScriptSuite {
  /** The raw client on the suite's Redis server. */
  readonly raw: Redis;
  /** The listener the current test opened with listen() (or rwLock()). */
  readonly listener: Listener;
  /** `<prefix>:<ms>:<n>`: a lock name no other test of the file has used. */
  fresh(prefix: string): string;
  /** Opens the test's listener on `channels`; it is closed after the test. */
  listen(...channels: string[]): Promise<Listener>;
  /** rwLock() on `name` (a fresh `rw` name unless given), with the test's listener on its channel. */
  rwLock(name?: string): Promise<ReturnType<typeof rwLock>>;
}

/**
 * Jest hooks for a spec of the Lua scripts: its Redis server (suiteRedis), fresh lock names, and
 * one pub/sub listener a test, closed after the test.
 */
export function scriptSuite(): ScriptSuite {
  const server = suiteRedis();
  let listener: Listener | undefined;
  let n = 0;
  afterEach(() => {
    listener?.close();
    listener = undefined;
  });
  const suite: ScriptSuite = {
    get raw() {
      return server.raw;
    },
    get listener() {
      return listener!;
    },
    fresh: (prefix) => `${prefix}:${Date.now()}:${++n}`,
    async listen(...channels) {
      listener = await Listener.open(server.raw, ...channels);
      return listener;
    },
    async rwLock(name = suite.fresh('rw')) {
      const lock = rwLock(server.raw, name);
      await suite.listen(lock.channel);
      return lock;
    },
  };
  return suite;
}
