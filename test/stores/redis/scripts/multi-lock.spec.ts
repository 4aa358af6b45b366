import type { Redis } from 'ioredis';
import { LockScripts } from '../../../../lib/stores/redis/lock-scripts';
import { suiteRedis } from '../../../support/suite-redis';
import { commandCalls, listen } from './probe-kit';
import { redisScript } from './script-kit';
import { ioredisClient } from '../../../../lib/stores/redis/client/ioredis';

const multiAcquire = redisScript('multi-acquire.lua');
const multiRelease = redisScript('multi-release.lua');

/** The busy reply of multi-acquire.lua, decoded as its header says. */
function busy(reply: number): { member: number; pttl: number } {
  const x = -1 - reply;
  return { member: (x % 1000) + 1, pttl: Math.floor(x / 1000) - 1 };
}

describe('multi-lock scripts against real Redis', () => {
  let raw: Redis;
  let test = 0;
  let keys: string[];
  const channel = (key: string) => `redisson_lock__channel:{${key}}`;
  const latch = (id: string) => `redisson_unlock_latch:{${keys[0]}}:${id.repeat(32)}`;
  const acquire = (owner: string, lease = 30_000, members = keys) =>
    multiAcquire.run(
      ioredisClient(raw),
      members.length,
      ...members,
      lease,
      owner,
    ) as Promise<number>;
  const release = (owner: string, id: string, members = keys) =>
    multiRelease.run(
      ioredisClient(raw),
      members.length + 1,
      ...members,
      latch(id),
      owner,
      10_000,
      ...members.map(channel),
    ) as Promise<(number | null)[]>;

  const server = suiteRedis();
  beforeAll(async () => {
    raw = server.raw;
    // Loaded up front, so that a counted call is one EVALSHA and not NOSCRIPT + LOAD + EVALSHA.
    await raw.script('LOAD', multiAcquire.source);
    await raw.script('LOAD', multiRelease.source);
  });
  beforeEach(() => {
    test += 1;
    keys = ['a', 'b', 'c'].map((member) => `multi:${test}:${member}`);
  });

  it('takes every member in one call, as ordinary RLock hashes the plain lock respects', async () => {
    await raw.config('RESETSTAT');
    expect(await acquire('me:1')).toBe(0);
    const calls = await commandCalls(raw);
    expect(calls.evalsha).toBe(1);
    expect(calls.eval).toBeUndefined();
    expect(calls.hset).toBe(3); // the script's own writes, one per member
    for (const key of keys) {
      expect(await raw.hgetall(key)).toEqual({ 'me:1': '1' });
      expect(await raw.pttl(key)).toBeGreaterThan(29_000);
    }
    const plain = (await LockScripts.acquire.run(
      ioredisClient(raw),
      1,
      keys[1],
      30_000,
      'other:1',
    )) as number;
    expect(-2 - plain).toBeGreaterThan(29_000);
  });

  it('takes nothing when one member is held by another owner, and names it with its PTTL', async () => {
    await raw.hset(keys[1], '9c345276-aa6e-44c1-b478-bf4b14ba1498:1', 2); // a Redisson holder
    await raw.pexpire(keys[1], 20_000);
    const reply = await acquire('me:2');
    expect(reply).toBeLessThan(0);
    const { member, pttl } = busy(reply);
    expect(member).toBe(2);
    expect(pttl).toBeGreaterThan(19_000);
    expect(pttl).toBeLessThanOrEqual(20_000);
    expect(await raw.exists(keys[0], keys[2])).toBe(0);
    expect(await raw.hgetall(keys[1])).toEqual({ '9c345276-aa6e-44c1-b478-bf4b14ba1498:1': '2' });
  });

  it('reports a busy member without a lease as -i, and caps a huge PTTL at 9e12 ms', async () => {
    await raw.hset(keys[2], 'java:1', 1);
    expect(await acquire('me:3')).toBe(-3);
    expect(busy(-3)).toEqual({ member: 3, pttl: -1 });
    await raw.pexpire(keys[2], 1e15);
    expect(busy(await acquire('me:3'))).toEqual({ member: 3, pttl: 9e12 });
    await raw.hset(keys[0], 'java:2', 1); // the first busy member in KEYS order is reported
    expect(busy(await acquire('me:3')).member).toBe(1);
  });

  it('an acquire sent twice keeps every count at 1 and renews the lease', async () => {
    expect(await acquire('me:4', 5_000)).toBe(0);
    expect(await acquire('me:4', 30_000)).toBe(0);
    for (const key of keys) {
      expect(await raw.hgetall(key)).toEqual({ 'me:4': '1' });
      expect(await raw.pttl(key)).toBeGreaterThan(29_000);
    }
  });

  it('members are renewed by the ordinary batched renewal (renew-all.lua), which reports a lost one', async () => {
    await acquire('me:5', 5_000);
    await raw.del(keys[1]);
    const renewed = await LockScripts.renew.run(
      ioredisClient(raw),
      3,
      ...keys,
      60_000,
      'lll',
      'me:5',
      'me:5',
      'me:5',
    );
    expect(renewed).toEqual([1, 0, 1]);
    expect(await raw.pttl(keys[0])).toBeGreaterThan(59_000);
    expect(await raw.pttl(keys[2])).toBeGreaterThan(59_000);
  });

  it('releases every member in one call and publishes 0 on each member’s channel', async () => {
    const listener = await listen(raw, ...keys.map(channel));
    try {
      await acquire('me:6');
      await raw.config('RESETSTAT');
      expect(await release('me:6', 'a')).toEqual([1, 1, 1]);
      expect((await commandCalls(raw)).evalsha).toBe(1);
      expect(await raw.exists(...keys)).toBe(0);
      await listener.received(3);
      expect(listener.messages).toEqual(keys.map((key) => [channel(key), '0']));
    } finally {
      listener.close();
    }
  });

  it('reports a member lost before the release as nil, frees the others, and leaves the new holder alone', async () => {
    await acquire('me:7');
    await raw.del(keys[0]); // expired ...
    await raw.hset(keys[0], 'other:7', 1); // ... and taken by someone else
    expect(await release('me:7', 'b')).toEqual([null, 0, 0]);
    expect(await raw.hgetall(keys[0])).toEqual({ 'other:7': '1' });
    expect(await raw.exists(keys[1], keys[2])).toBe(0);
  });

  it('a release sent twice returns its first answer; another request gets all nil', async () => {
    const listener = await listen(raw, channel(keys[2]));
    try {
      await acquire('me:8');
      await raw.del(keys[1]);
      expect(await release('me:8', 'c')).toEqual([0, null, 1]);
      expect(await release('me:8', 'c')).toEqual([0, null, 1]); // the resend, from the latch
      expect(await release('me:8', 'd')).toEqual([null, null, null]);
      await raw.publish(channel(keys[2]), 'marker'); // delivered after anything published before
      await listener.received(2);
      expect(listener.messages.map(([, message]) => message)).toEqual(['0', 'marker']);
    } finally {
      listener.close();
    }
  });

  it('stores no latch when every member was lost, so a resend answers the same', async () => {
    await acquire('me:9');
    await raw.del(...keys);
    expect(await release('me:9', 'e')).toEqual([null, null, null]);
    expect(await raw.exists(latch('e'))).toBe(0);
    expect(await release('me:9', 'e')).toEqual([null, null, null]);
  });

  it('needs duplicate-free keys (the engine dedups): a repeated member releases once, then reads as lost', async () => {
    const twice = [keys[0], keys[0], keys[1]];
    expect(await acquire('me:10', 30_000, twice)).toBe(0);
    expect(await raw.hgetall(keys[0])).toEqual({ 'me:10': '1' });
    expect(await release('me:10', 'f', twice)).toEqual([0, null, 0]);
  });

  it('refuses more than 1000 members per call and a release without members', async () => {
    const many = Array.from({ length: 1001 }, (_, i) => `multi:many:${i}`);
    await expect(acquire('me:11', 30_000, many)).rejects.toThrow(/at most 1000 keys/);
    expect(await raw.exists(many[0])).toBe(0);
    await expect(release('me:11', 'g', [])).rejects.toThrow(/at least one member/);
  });
});
