import type { Redis } from 'ioredis';
import { LockScripts } from '../../../lib/stores/redis/lock-scripts';
import { openStore, type OpenedStore } from '../../../lib/nest/open-store';
import type { KeptReleasePort } from '../../../lib/store';
import { RELEASE_KEPT } from '../../../lib/stores/redis/scripts/plain';
import { RENEW_ALL, RENEW_NODE, type RenewEntry } from '../../../lib/stores/redis/scripts/renew';
import { runScript } from '../../../lib/stores/redis/scripts/script-definition';
import { ioredisClient } from '../../../lib/stores/redis/client/ioredis';
import { lockAppEach } from '../../support/lock-app';
import { RedissonLockSide } from '../../support/redisson-lock';
import { suiteRedis } from '../../support/suite-redis';
import { sleep, until } from '../../../tools/time';
import type { LockService } from '../../../lib';

// holdAtLeast on Redis: release-kept.lua, and what a Java RLock on the same name sees.
describe('a kept release (holdAtLeast) on Redis', () => {
  const server = suiteRedis();
  let raw: Redis;
  let locks: LockService;
  let prefix: string;
  beforeAll(() => (raw = server.raw));
  lockAppEach(
    () => server.redis,
    { leaseTime: 3_000 },
    (made) => ({ locks, prefix } = made),
  );

  it('leaves the RLock held, as Redisson reads it, until the end of the period', async () => {
    const name = `${prefix}report`;
    const java = new RedissonLockSide(raw);
    const before = Date.now(); // before the grant
    let owner = '';
    await locks.run(
      'report',
      async () => {
        owner = Object.keys(await raw.hgetall(name))[0];
      },
      { holdAtLeast: 600 },
    );
    // Held, as RLock reads a hash; the owner's field is renamed, so no renewal can stretch it.
    expect(await raw.hgetall(name)).toEqual({ [`${owner}:kept`]: '1' });
    const ttl = await java.lock(name, 1, 10_000);
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(600);
    let taken: number | null = ttl;
    await until(async () => (taken = await java.lock(name, 1, 10_000)) === null, 3_000, {
      every: 10,
    });
    expect(taken).toBeNull();
    expect(Date.now() - before).toBeGreaterThanOrEqual(600);
    expect(await raw.hgetall(name)).toEqual({ [java.owner(1)]: '1' });
    await raw.del(name);
  });

  it('publishes no release notice (a normal release does), so waiters are not woken early', async () => {
    const channel = `redisson_lock__channel:{${prefix}quiet}`;
    const sub = raw.duplicate();
    const messages: string[] = [];
    try {
      await sub.subscribe(channel);
      sub.on('message', (from: string) => messages.push(from));
      await locks.run('quiet', () => undefined, { holdAtLeast: 200 });
      await sleep(300);
      expect(messages).toEqual([]);
      await locks.run('quiet', () => undefined);
      await until(() => messages.length > 0, 2_000);
      expect(messages).toEqual([channel]);
    } finally {
      sub.disconnect();
    }
  });

  // The watchdog's renewal sent just before the release can reach Redis after it: its EVALSHA
  // met NOSCRIPT (a new or restarted server) and was sent again, or a reconnect resent it. A
  // job whose end met its renewal then kept the lock a whole lease, and the next tick was lost.
  it('is not stretched by a renewal sent before it that Redis runs after it', async () => {
    const source = { redis: server.redis.url, syncTimeout: 1_000 };
    const store = openStore(source, () => undefined) as OpenedStore & KeptReleasePort;
    const name = `${prefix}stretch`;
    const hold = { kind: 'lock', key: 'stretch', name, owner: 'me:5' } as const;
    try {
      await store.connect(5_000);
      expect((await store.acquire({ ...hold, leaseTime: 30_000, fencing: false })).granted).toBe(
        true,
      );
      // Only the renewal meets NOSCRIPT: it is sent again after the kept release.
      await raw.script('FLUSH');
      await raw.script('LOAD', LockScripts.releaseKept.source);
      const renewed = store.renew([hold], 30_000);
      expect(await store.releaseKept(hold, 300)).toBe(true);
      expect(await renewed).toEqual([false]);
      expect(await raw.pttl(name)).toBeLessThanOrEqual(300);
    } finally {
      await store.close();
    }
  });

  describe('release-kept.lua', () => {
    const name = `kept:${Date.now()}`;
    const latch = (id: string) => `redisson_unlock_latch:{${name}}:${id.repeat(32)}`;
    const keep = (field: string, id: string, ms: number) =>
      LockScripts.releaseKept.run(ioredisClient(raw), 2, name, latch(id), field, 10_000, ms);

    it('sets the hash lease to the period, and a resend moves nothing', async () => {
      await raw.hset(name, 'me:1', 1);
      await raw.pexpire(name, 30_000);
      expect(await keep('me:1', 'a', 5_000)).toBe(1);
      const first = await raw.pttl(name);
      expect(first).toBeLessThanOrEqual(5_000);
      expect(first).toBeGreaterThan(4_000);
      expect(await raw.pttl(latch('a'))).toBeGreaterThan(9_000);
      await sleep(50);
      expect(await keep('me:1', 'a', 5_000)).toBe(1); // the same request sent again
      expect(await raw.pttl(name)).toBeLessThan(first);
      expect(await raw.hgetall(name)).toEqual({ 'me:1:kept': '1' });
      await raw.del(name, latch('a'));
    });

    it('touches nothing of another owner, nor a free lock', async () => {
      await raw.hset(name, 'other:1', 1);
      await raw.pexpire(name, 30_000);
      expect(await keep('me:2', 'b', 100)).toBeNull();
      expect(await raw.pttl(name)).toBeGreaterThan(29_000);
      expect(await raw.exists(latch('b'))).toBe(0);
      await raw.del(name);
      expect(await keep('me:2', 'c', 100)).toBeNull();
      expect(await raw.exists(name)).toBe(0);
    });

    it('leaves no owner field a renewal can stretch (renew-all.lua, renew-node.lua)', async () => {
      await raw.hset(name, 'me:4', 1);
      await raw.pexpire(name, 30_000);
      expect(await keep('me:4', 'e', 300)).toBe(1);
      const entry: RenewEntry = { letter: 'l', keys: [name], owner: 'me:4', hold: 0 };
      const client = ioredisClient(raw);
      expect(await runScript(client, RENEW_ALL, [entry], 30_000)).toEqual([0]);
      expect(await runScript(client, RENEW_NODE, [entry], 30_000)).toEqual([0]);
      expect(await raw.pttl(name)).toBeLessThanOrEqual(300);
      await raw.del(name, latch('e'));
    });

    it('keeps its latch at least as long as the period, so a late resend cannot stretch it', async () => {
      await raw.hset(name, 'me:3', 1);
      await raw.pexpire(name, 30_000);
      const hold = { kind: 'lock', key: name, name, owner: 'me:3' } as const;
      expect(await runScript(ioredisClient(raw), RELEASE_KEPT, hold, latch('d'), 20_000)).toBe(
        true,
      );
      expect(await raw.pttl(latch('d'))).toBeGreaterThan(19_000);
      await raw.del(name, latch('d'));
    });
  });
});
