import type { Redis } from 'ioredis';
import {
  LockAcquireTimeoutError,
  LockError,
  LockKeyError,
  LockOptionsError,
  type LockHandle,
  type LockService,
} from '../../../lib';
import { lockApp } from '../../support/lock-app';
import type { TestRedis } from '../../support/redis-server';
import { suiteRedis } from '../../support/suite-redis';
import { bodies, nothingRanNorLeft } from './refusal-kit';
import { sleep } from '../../../tools/time';

const LIMIT = 1024;

describe('bad input to LockService: a typed error naming the problem, nothing run, nothing locked', () => {
  let redis: TestRedis;
  let raw: Redis;
  let locks: LockService;
  let prefix: string;
  const body = () => {
    bodies.runs++;
    return 'ran';
  };

  const server = suiteRedis();
  beforeAll(async () => {
    ({ redis, raw } = server);
    const made = await lockApp(redis, { leaseTime: 1_000, waitTime: 2_000 });
    ({ locks, prefix } = made);
    server.closing(made.app);
  });
  nothingRanNorLeft(
    () => raw,
    () => prefix,
  );

  /** Every LockService method that takes a key, called with `key`. */
  const keyCalls = (key: unknown) => [
    () => locks.run(key as string, body),
    () => locks.acquire(key as string),
    () => locks.tryAcquire(key as string),
    () => locks.isLocked(key as string),
    () => locks.remainingTtl(key as string),
    () => locks.forceUnlock(key as string),
  ];
  /** The error `call` failed with; a lock it took instead is released (so a gap shows once). */
  const failure = (call: () => unknown) =>
    Promise.resolve()
      .then(call)
      .then(
        async (result: unknown) => {
          if (result && typeof result === 'object' && 'release' in result) {
            await (result as LockHandle).release().catch(() => undefined);
          }
          return result;
        },
        (error: unknown) => error,
      );

  describe('keys', () => {
    it.each([
      ['an empty string', '', /non-empty string, got ""/],
      ['a number', 42, /non-empty string, got 42/],
      ['undefined', undefined, /non-empty string, got undefined/],
      ['null', null, /non-empty string, got null/],
      ['an object', { id: 1 }, /non-empty string, got an object/],
      ['an array holding a number', ['a', 42], /non-empty string, got (42|an array)/],
      ['a symbol', Symbol('k'), /non-empty string, got a symbol/],
      ['a boolean', true, /non-empty string, got true/],
      ['1 100 ASCII characters', 'k'.repeat(1_100), /\d+ bytes long; the limit is 1024/],
      ['400 CJK characters (1 200 UTF-8 bytes)', '漢'.repeat(400), /\d+ bytes long/],
      ['256 emoji (1 024 bytes, over the limit with the prefix)', '🔒'.repeat(256), /bytes long/],
      // Lone UTF-16 surrogates all become U+FFFD on the wire,
      // so '\uD800' and '\uDBFF' would be the same lock.
      ['a lone high surrogate', 'order:\uD800', /surrogate|unicode|UTF/i],
      ['a lone low surrogate', '\uDC00:order', /surrogate|unicode|UTF/i],
      // Their auxiliary names (Redisson's) would hash to another cluster slot than the lock.
      ['an unbalanced brace', 'a{b', /has a "\{" with no "\}" after it/],
      ['reversed braces', '}{', /has a "\{" with no "\}" after it/],
      ['an empty hash tag', '{}x', /has an empty hash tag "\{\}"/],
      ['an empty hash tag before a full one', '{}{x}', /has an empty hash tag/],
      ['a closing brace alone', 'a}b', /has a "\}" with no "\{" before it/],
    ])('%s is refused by every keyed method with LockKeyError', async (_what, key, message) => {
      for (const call of keyCalls(key)) {
        const error = await failure(call);
        expect(error).toBeInstanceOf(LockKeyError);
        expect(error).toBeInstanceOf(LockError);
        expect((error as Error).message).toMatch(message);
      }
    });

    it('the byte limit counts keyPrefix + key in UTF-8: exactly 1024 bytes works, 1025 does not', async () => {
      const room = LIMIT - Buffer.byteLength(prefix);
      const fits = 'é'.repeat(Math.floor(room / 2)) + 'x'.repeat(room % 2);
      expect(Buffer.byteLength(prefix + fits)).toBe(LIMIT);
      await locks.run(fits, async () => {
        expect(await raw.exists(prefix + fits)).toBe(1);
      });
      const error = await failure(() => locks.acquire(`${fits}x`));
      expect(error).toBeInstanceOf(LockKeyError);
      expect((error as Error).message).toMatch(/1025 bytes long; the limit is 1024/);
    });

    it.each([
      ['a hash tag', '{user:1}:cart'],
      ['a hash tag after a closing brace, and braces after it', '}x{y}z{}'],
      ['accents, CJK and emoji', 'ünïcødé:漢字:🔒'],
      ['combining marks and a zero-width space', 'e\u0301\u200b'],
      ['whitespace and control characters', ' sp ace\ttab\nline '],
      ['a NUL byte', 'nul\u0000key'],
    ])('%s is a valid key: it round-trips to Redis byte for byte', async (_what, key) => {
      await locks.run(key, async (lock) => {
        expect(lock.key).toBe(key);
        expect(await raw.exists(prefix + key)).toBe(1);
        const [stored] = await raw.keysBuffer(`${prefix}*`);
        expect(stored.equals(Buffer.from(prefix + key))).toBe(true);
      });
    });
  });

  describe('lock options (acquire, tryAcquire, run)', () => {
    it.each([
      [{ waitTime: -1 }, 'waitTime', /got -1/],
      [{ waitTime: '100' }, 'waitTime', /got "100"/],
      [{ waitTime: Number.NaN }, 'waitTime', /got NaN/],
      [{ waitTime: null }, 'waitTime', /got null/],
      [{ waitTime: 10n }, 'waitTime', /got 10/],
      [{ leaseTime: 0 }, 'leaseTime', /from 30 to 2\^31-1, got 0/],
      [{ leaseTime: 29 }, 'leaseTime', /got 29/],
      [{ leaseTime: -5 }, 'leaseTime', /got -5/],
      [{ leaseTime: 1_500.5 }, 'leaseTime', /whole number/],
      [{ leaseTime: Infinity }, 'leaseTime', /got Infinity/],
      [{ leaseTime: Number.NaN }, 'leaseTime', /got NaN/],
      [{ leaseTime: 2 ** 31 }, 'leaseTime', /got 2147483648/], // a timer would fire at once
      [{ leaseTime: 2 ** 31 + 1 }, 'leaseTime', /got 2147483649/],
      [{ leaseTime: '30000' }, 'leaseTime', /got "30000"/],
      [{ signal: 'stop' }, 'signal', /AbortSignal, got "stop"/],
      [{ signal: {} }, 'signal', /AbortSignal, got an object/],
      [null, 'options', /expected an object, got null/],
      ['fast', 'options', /expected an object, got "fast"/],
      [42, 'options', /expected an object, got 42/],
      // Ignored silently, a typo such as `waittime` would wait the default 10 s.
      [{ waittime: 0 }, 'waittime', /unknown option.*waitTime/],
      [{ timeout: 100 }, 'timeout', /unknown option/],
    ])('%j is refused with LockOptionsError naming %s', async (options, option, message) => {
      for (const call of [
        () => locks.run('k', body, options as never),
        () => locks.acquire('k', options as never),
        () => locks.tryAcquire('k', options as never),
      ]) {
        const error = await failure(call);
        expect(error).toBeInstanceOf(LockOptionsError);
        expect(error).toBeInstanceOf(LockError);
        expect((error as LockOptionsError).option).toBe(option);
        expect((error as Error).message).toMatch(message);
      }
    });

    it('a waitTime beyond what a timer can hold is either refused or honoured, never cut to ~1 ms', async () => {
      const held = await locks.acquire('long-wait');
      try {
        for (const waitTime of [2 ** 31, 2 ** 32, Number.MAX_SAFE_INTEGER]) {
          const outcome = await Promise.race([
            failure(() => locks.acquire('long-wait', { waitTime })),
            sleep(300).then(() => 'still waiting'),
          ]);
          // setTimeout() overflows above 2^31-1 ms and fires at once: that must not become a
          // LockAcquireTimeoutError right away.
          expect(outcome).not.toBeInstanceOf(LockAcquireTimeoutError);
          expect(outcome === 'still waiting' || outcome instanceof LockOptionsError).toBe(true);
        }
      } finally {
        await held.release();
      }
    });
  });

  describe('run() arguments', () => {
    it.each([
      ["'retry'", 'retry'],
      ['42', 42],
    ])(
      'onLockLost %s is refused with LockOptionsError before anything is locked',
      async (_what, policy) => {
        const error = await failure(() => locks.run('k', body, { onLockLost: policy as never }));
        expect(error).toBeInstanceOf(LockOptionsError);
        expect((error as LockOptionsError).option).toBe('onLockLost');
      },
    );

    it.each([
      ['a string', 'not a function'],
      ['undefined', undefined],
      ['an object', { call: () => 1 }],
    ])(
      'a function argument that is %s is refused with a LockError, before locking',
      async (_what, fn) => {
        const before = await raw.info('commandstats');
        // Not a TypeError after the lock was taken: refused before any Redis call.
        const error = await failure(() => locks.run('k', fn as never));
        expect(error).toBeInstanceOf(LockError);
        expect((error as Error).message).toMatch(/function/);
        const evalshaCalls = (stats: string) => /cmdstat_evalsha:calls=(\d+)/.exec(stats)?.[1];
        expect(evalshaCalls(await raw.info('commandstats'))).toBe(evalshaCalls(before));
      },
    );
  });

  describe('runAs() and handles', () => {
    it.each([
      ['a plain object', { key: 'k', release: () => Promise.resolve() }],
      ['null', null],
    ])('runAs with %s is refused with LockError, the function not run', async (_what, handle) => {
      const error = await failure(() => locks.runAs(handle as unknown as LockHandle, body));
      expect(error).toBeInstanceOf(LockError);
      expect((error as Error).message).toMatch(/takes a handle returned by this LockService/);
    });

    it('runAs with a handle of another application’s LockService is refused', async () => {
      const other = await lockApp(redis, { keyPrefix: prefix });
      const foreign = await other.locks.acquire('foreign');
      try {
        // Accepted, this app would treat the other app's hold as its own and re-enter it
        // without holding anything itself.
        let inside = 'not run';
        const error = await failure(() =>
          locks.runAs(foreign, () => locks.run('foreign', () => (inside = 'ran'))),
        );
        expect(error).toBeInstanceOf(LockError);
        expect(inside).toBe('not run');
      } finally {
        await foreign.release();
        await other.app.close();
      }
    });

    it('a second release is refused with LockNotHeldError naming the key', async () => {
      const lock = await locks.acquire('twice');
      await lock.release();
      await expect(lock.release()).rejects.toThrow(/Lock "twice" is not held by this caller/);
    });
  });
});
