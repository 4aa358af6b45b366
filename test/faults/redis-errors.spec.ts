import { ReplyError, type Redis } from 'ioredis';
import { LockError, LockLostError, LockRedisError } from '../../lib';
import { freePort, type TestRedis } from '../support/redis-server';
import {
  LEASE,
  LOSS_BOUND,
  fastRedis,
  faultRedis,
  logged,
  settled,
  type LockNode,
} from './fault-kit';
import { sleep, until } from '../../tools/time';

/** A way for Redis to refuse lock commands, how to start and stop it, and what it answers. */
interface Refusal {
  name: string;
  answer: RegExp;
  start(raw: Redis): Promise<unknown>;
  stop(raw: Redis): Promise<unknown>;
  /** Whether the watchdog's renewal (HEXISTS + PEXPIRE) still works under it. */
  renewalWorks: boolean;
  /** Whether forceUnlock (DEL + PUBLISH) is refused too. */
  forceUnlockRefused: boolean;
}

const refusals: Refusal[] = [
  {
    name: 'READONLY (turned into a replica of an unreachable primary)',
    answer: /READONLY/,
    start: async (raw) => raw.replicaof('127.0.0.1', String(await freePort())),
    stop: (raw) => raw.replicaof('NO', 'ONE'),
    renewalWorks: false,
    forceUnlockRefused: true,
  },
  {
    name: 'OOM (maxmemory 1, noeviction)',
    answer: /OOM/,
    start: async (raw) => {
      await raw.config('SET', 'maxmemory-policy', 'noeviction');
      return raw.config('SET', 'maxmemory', '1');
    },
    stop: (raw) => raw.config('SET', 'maxmemory', '0'),
    renewalWorks: true, // PEXPIRE is allowed when out of memory: held locks stay held
    forceUnlockRefused: false, // DEL frees memory: allowed
  },
  {
    name: 'NOPERM (EVALSHA revoked from the ACL user)',
    answer: /NOPERM/,
    start: (raw) => raw.acl('SETUSER', 'app', '-evalsha'),
    stop: (raw) => raw.acl('SETUSER', 'app', '+evalsha'),
    renewalWorks: false,
    forceUnlockRefused: true,
  },
  {
    name: 'ACL denying a command the scripts call (HSET, PEXPIRE revoked)',
    answer: /can't run this command/,
    start: (raw) => raw.acl('SETUSER', 'app', '-hset', '-pexpire'),
    stop: (raw) => raw.acl('SETUSER', 'app', '+hset', '+pexpire'),
    renewalWorks: false,
    forceUnlockRefused: false, // DEL and PUBLISH are still allowed
  },
];

describe.each(refusals)('fault: Redis answering $name (its own redis-server)', (refusal) => {
  const server = faultRedis();
  let redis: TestRedis;
  let raw: Redis;
  let a: LockNode;
  let b: LockNode;

  beforeAll(async () => {
    ({ redis, raw } = server);
    await raw.acl('SETUSER', 'app', 'on', '>pw', '~*', '&*', '+@all');
    const asApp = (extra = {}) =>
      fastRedis(redis.port, { username: 'app', password: 'pw', ...extra });
    a = await server.node(asApp());
    b = await server.node(asApp(), { keyPrefix: a.prefix });
    // Load the scripts while Redis still accepts everything.
    await (await a.locks.acquire('warm-up')).release();
    await (await b.locks.acquire('warm-up')).release();
  });
  afterEach(() => refusal.stop(raw));

  it('acquire, tryAcquire, run (and forceUnlock where refused) reject at once with a LockRedisError naming it; nothing run, nothing locked', async () => {
    await refusal.start(raw);
    let ran = false;
    const started = Date.now();
    const calls = [
      a.locks.acquire('refused', { waitTime: 5_000 }),
      a.locks.tryAcquire('refused'),
      a.locks.run('refused', () => (ran = true), { waitTime: 5_000 }),
      ...(refusal.forceUnlockRefused ? [a.locks.forceUnlock('refused')] : []),
    ];
    const outcomes = await Promise.all(calls.map(settled));
    expect(Date.now() - started).toBeLessThan(1_000);
    for (const error of outcomes) {
      expect(error).toBeInstanceOf(LockRedisError);
      expect(error).toBeInstanceOf(LockError);
      expect((error as LockRedisError).key).toBe('refused');
      expect((error as Error).message).toMatch(refusal.answer);
      expect((error as Error).cause).toBeInstanceOf(ReplyError);
    }
    expect(ran).toBe(false);
    await refusal.stop(raw);
    expect(await raw.exists(`${a.prefix}refused`)).toBe(0);
  });

  it('a waiter is rejected, not stuck; the holder is told if its renewal fails; release does not throw; service within 1 s of the fix', async () => {
    const held = await a.locks.acquire('busy');
    const waiting = settled(b.locks.acquire('busy', { waitTime: 10_000 }));
    await sleep(50);
    await refusal.start(raw);
    const startedAt = Date.now();
    if (refusal.renewalWorks) {
      // The holder keeps its lock; the waiter keeps waiting until the release wakes it.
      await sleep(LEASE * 1.5);
      expect(held.signal.aborted).toBe(false);
    } else {
      // The waiter retries when the holder's TTL runs out and meets the refusal; the holder's
      // renewals fail, so it is told within a lease.
      await until(() => held.signal.aborted, LOSS_BOUND * 2);
      expect(Date.now() - startedAt).toBeLessThan(LOSS_BOUND);
      expect(held.signal.reason).toBeInstanceOf(LockLostError);
    }
    const warnings = logged.length;
    // A release refused by Redis never throws at the owner (a lost lock still reports its loss).
    const released = await settled(held.release());
    expect(released === undefined || released instanceof LockLostError).toBe(true);
    // A refused release is logged (the lock then runs out its lease); OOM lets it through.
    for (const line of logged.slice(warnings)) {
      expect(line.message).toMatch(/^Releasing lock "busy" failed .* it will expire within 600 ms/);
    }
    const error = await waiting;
    expect(error).toBeInstanceOf(LockRedisError);
    expect((error as Error).message).toMatch(refusal.answer);
    expect(Date.now() - startedAt).toBeLessThan(LEASE * 2 + 500);
    await refusal.stop(raw);
    const fixedAt = Date.now();
    const next = await b.locks.acquire('after-fix', { waitTime: 1_000 });
    await next.release();
    expect(Date.now() - fixedAt).toBeLessThan(1_000);
    // The refused release leaves the lock to its lease: gone within one lease.
    const again = await b.locks.acquire('busy', { waitTime: LEASE + 500 });
    await again.release();
  });
});
