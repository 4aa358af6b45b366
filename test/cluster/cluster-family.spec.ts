import { setImmediate as yieldTurn } from 'node:timers/promises';
import type { Command } from 'ioredis';
import type { LockService } from '../../lib';
import { keySlot } from '../../lib/engine/redis/key-slot';
import { LockScripts } from '../../lib/engine/redis/lock-scripts';
import {
  channelName,
  fairQueueName,
  fairTimeoutName,
  permitsName,
  rwChannelName,
  semaphoreChannelName,
} from '../../lib/engine/redis/redis-names';
import { sleep, until } from '../support/lock-app';
import { suiteCluster } from '../support/redis-cluster';
import { clusterApp } from './cluster-kit';

/** Multi-locks, semaphores and read-write locks on a 3-master Redis Cluster (one for the file). */
describe('the lock family on a Redis Cluster', () => {
  const suite = suiteCluster({ masters: 3, replicasPerMaster: 0 });
  const closers: (() => Promise<unknown>)[] = [];
  afterAll(async () => {
    await Promise.all(closers.map((close) => close()));
  });
  /** Two LockServices (as two processes) on one key prefix; a long lease: no wake-up by expiry. */
  async function apps(): Promise<[LockService, LockService, string]> {
    const first = await clusterApp(suite.cluster, { leaseTime: 30_000, waitTime: 5_000 });
    const second = await clusterApp(suite.cluster, {
      keyPrefix: first.prefix,
      leaseTime: 30_000,
      waitTime: 5_000,
    });
    closers.push(
      () => first.app.close(),
      () => second.app.close(),
    );
    return [first.locks, second.locks, first.prefix];
  }
  /** Keys whose names fall in `count` different slots. */
  function spreadKeys(prefix: string, count: number): string[] {
    const keys: string[] = [];
    const slots = new Set<number>();
    for (let i = 0; keys.length < count; i++) {
      const slot = keySlot(`${prefix}k${i}`);
      if (slots.has(slot)) continue;
      slots.add(slot);
      keys.push(`k${i}`);
    }
    return keys;
  }

  it('takes a multi-lock across slots all or nothing, waiting for a busy slot by its notice', async () => {
    const [locks, other, prefix] = await apps();
    const keys = spreadKeys(prefix, 3);
    const sorted = [...keys].sort((a, b) => keySlot(prefix + a) - keySlot(prefix + b));
    // The busy member is in the last slot: the earlier slots are taken, then given back.
    const busy = await other.acquire(sorted[2]);
    expect(await locks.tryAcquire(keys)).toBeNull();
    for (const key of keys.filter((key) => key !== sorted[2])) {
      expect(await locks.isLocked(key)).toBe(false);
    }
    const waiting = locks.acquire(keys);
    // While the group waits, the free members stay takeable by others (an attempt of the group
    // holds the earlier slots for a moment, and its give-back wakes this waiter).
    const first = await other.acquire(sorted[0], { waitTime: 2_000 });
    await first.release();
    await busy.release();
    const group = await waiting;
    expect(group.keys).toEqual(keys);
    for (const key of keys) expect(await other.tryAcquire(key)).toBeNull();
    await group.release();
    for (const key of keys) expect(await locks.isLocked(key)).toBe(false);
  });

  it('takes the members of one slot with one script call per slot', async () => {
    const [locks] = await apps();
    const [x, y] = ['x', 'y'];
    expect(keySlot(`{${x}}`)).not.toBe(keySlot(`{${y}}`));
    const keys = [`{${x}}1`, `{${x}}2`, `{${y}}1`, `{${y}}2`];
    await locks.acquire(keys).then((warm) => warm.release()); // scripts loaded on every master
    await suite.cluster.resetStats();
    const group = await locks.acquire(keys);
    const calls = await Promise.all(
      (await suite.cluster.masters()).map(async (port) => {
        const stats = await suite.cluster.commandstats(port);
        return (stats.evalsha ?? 0) + (stats.eval ?? 0);
      }),
    );
    await group.release();
    // Two slots (on one master or two): two calls in all.
    expect(calls.reduce((sum, count) => sum + count, 0)).toBe(2);
  });

  it('keeps a multi-lock across slots, and a permit, renewed past their lease', async () => {
    const { app, locks, prefix } = await clusterApp(suite.cluster, { leaseTime: 300 });
    closers.push(() => app.close());
    const keys = spreadKeys(prefix, 3);
    const group = await locks.acquire(keys);
    const permit = await locks.semaphore('renewed', { permits: 1 }).acquire();
    const lease = async (key: string) => (await locks.remainingTtl(key)) ?? 0;
    // Renewed: the remaining lease goes back up after it fell (no fixed sleep).
    const start = await lease(keys[2]);
    await until(async () => (await lease(keys[2])) > start, 2_000);
    await until(async () => (await lease(keys[0])) > 250, 2_000);
    await sleep(700); // more than two leases: only renewals keep them
    expect(group.signal.aborted).toBe(false);
    expect(permit.signal.aborted).toBe(false);
    for (const key of keys) expect(await locks.isLocked(key)).toBe(true);
    await permit.release();
    await group.release();
  });

  it('renews permits of many semaphores with one call per master per period, not one per slot', async () => {
    const { app, locks, prefix } = await clusterApp(suite.cluster, { leaseTime: 600 });
    closers.push(() => app.close());
    const names = spreadKeys(prefix, 30);
    const masters = await suite.cluster.masters();
    const permits = await Promise.all(
      names.map((name) => locks.semaphore(name, { permits: 1 }).acquire()),
    );
    const scriptCalls = async () => {
      let calls = 0;
      for (const port of masters) {
        const stats = await suite.cluster.commandstats(port);
        calls += (stats.evalsha ?? 0) + (stats.eval ?? 0);
      }
      return calls;
    };
    await sleep(250); // the first round loads the script on each master's connection
    await suite.cluster.resetStats();
    await sleep(1_000); // five periods of 200 ms
    const calls = await scriptCalls();
    expect(calls).toBeGreaterThanOrEqual(masters.length * 3);
    expect(calls).toBeLessThanOrEqual(masters.length * 7); // 30 permits: 150 calls one per slot
    expect(permits.filter((permit) => permit.signal.aborted)).toEqual([]);
    // A permit gone from its zset is reported lost by the next round; the others stay held.
    await suite.cluster.client().del(permitsName(`${prefix}${names[0]}`));
    await until(() => permits[0].signal.aborted, 2_000);
    expect(permits.slice(1).filter((permit) => permit.signal.aborted)).toEqual([]);
    await Promise.all(permits.slice(1).map((permit) => permit.release()));
  });

  it('completes opposite orders across slots with no exclusion violation', async () => {
    const [locks, other, prefix] = await apps();
    const keys = spreadKeys(prefix, 3);
    let inside = 0;
    let violations = 0;
    let cycles = 0;
    const until = Date.now() + 1_500;
    const worker = async (service: LockService, order: string[]) => {
      while (Date.now() < until) {
        await service.run(order, async () => {
          if (++inside !== 1) violations++;
          await yieldTurn();
          inside--;
        });
        cycles++;
      }
    };
    const reversed = [...keys].reverse();
    await Promise.all([
      worker(locks, keys),
      worker(locks, reversed),
      worker(other, keys),
      worker(other, reversed),
    ]);
    expect(violations).toBe(0);
    expect(cycles).toBeGreaterThan(4);
    for (const key of keys) expect(await locks.isLocked(key)).toBe(false);
  }, 20_000);

  it('limits a semaphore and wakes its waiter on release', async () => {
    const [locks, other] = await apps();
    const here = locks.semaphore('sem', { permits: 2 });
    const there = other.semaphore('sem', { permits: 2 });
    const first = await here.acquire();
    const second = await there.acquire();
    expect(await here.available()).toBe(0);
    expect(await there.tryAcquire()).toBeNull();
    const waiting = there.acquire();
    await first.release();
    const third = await waiting;
    await Promise.all([second.release(), third.release()]);
    expect(await here.available()).toBe(2);
  });

  it('shares a read lock between processes and gives the write lock after the reads', async () => {
    const [locks, other] = await apps();
    const read = await locks.acquire('doc', { mode: 'read' });
    const otherRead = await other.acquire('doc', { mode: 'read', waitTime: 0 });
    expect(await other.tryAcquire('doc', { mode: 'write' })).toBeNull();
    const writing = other.acquire('doc', { mode: 'write' });
    await read.release();
    await otherRead.release();
    const write = await writing;
    expect(await locks.tryAcquire('doc', { mode: 'read' })).toBeNull();
    await write.release();
    await until(async () => !(await locks.isLocked('doc')));
  });

  describe('wakes waiters of every kind by a sharded notice (SPUBLISH/SSUBSCRIBE, as Redisson)', () => {
    /** Shard channels matching `pattern` subscribed on the master of `key`'s slot. */
    async function shardChannels(key: string, pattern: string): Promise<string[]> {
      const port = await suite.cluster.masterForKey(key);
      return (await suite.cluster.admin
        .get(port)
        .call('PUBSUB', 'SHARDCHANNELS', pattern)) as string[];
    }
    /** SPUBLISH and PUBLISH calls on all masters since the last resetStats(). */
    async function publishes(): Promise<{ spublish: number; publish: number }> {
      const counts = { spublish: 0, publish: 0 };
      for (const port of await suite.cluster.masters()) {
        const stats = await suite.cluster.commandstats(port);
        counts.spublish += stats.spublish ?? 0;
        counts.publish += stats.publish ?? 0;
      }
      return counts;
    }
    /**
     * `hold` is taken by one LockService (a 30 s lease), `wait` waits in the other one until the
     * waiter's channel (matching `pattern`) is subscribed sharded, then `hold` is released (or
     * `free` frees it from the holder's LockService): the waiter must get in by the notice, long
     * before the lease, and every notice must be sharded (`spublish` of them).
     */
    async function wokenBySharded(
      name: string,
      pattern: (key: string) => string,
      hold: (locks: LockService) => Promise<{ release(): Promise<unknown> }>,
      wait: (locks: LockService) => Promise<{ release(): Promise<unknown> }>,
      free?: { by: (locks: LockService) => Promise<boolean>; spublish: number },
    ): Promise<void> {
      const [locks, other, prefix] = await apps();
      const held = await hold(other);
      const waiting = wait(locks);
      waiting.catch(() => undefined); // awaited below; a failed check must not leave it unhandled
      const key = prefix + name;
      await until(async () => (await shardChannels(key, pattern(key))).length > 0, 3_000);
      await suite.cluster.resetStats();
      const started = Date.now();
      if (free) expect(await free.by(other)).toBe(true);
      else await held.release();
      const got = await waiting;
      expect(Date.now() - started).toBeLessThan(2_000); // not the 30 s lease, nor the 5 s wait
      expect(await publishes()).toEqual({ spublish: free?.spublish ?? 1, publish: 0 });
      await got.release();
    }

    it('a read-write waiter', async () => {
      await wokenBySharded(
        'rw',
        rwChannelName,
        (locks) => locks.acquire('rw', { mode: 'write' }),
        (locks) => locks.acquire('rw', { mode: 'read' }),
      );
    });

    it('a fair waiter (its own channel, named in the script)', async () => {
      await wokenBySharded(
        'fair',
        (key) => `${channelName(key)}:*`,
        (locks) => locks.acquire('fair', { fair: true }),
        (locks) => locks.acquire('fair', { fair: true }),
      );
    });

    it('a semaphore waiter', async () => {
      await wokenBySharded(
        'sem',
        semaphoreChannelName,
        (locks) => locks.semaphore('sem', { permits: 1 }).acquire(),
        (locks) => locks.semaphore('sem', { permits: 1 }).acquire(),
      );
    });

    it('the same when the holder is force-unlocked (force-unlock scripts)', async () => {
      await wokenBySharded(
        'rw',
        rwChannelName,
        (locks) => locks.acquire('rw', { mode: 'read' }),
        (locks) => locks.acquire('rw', { mode: 'write' }),
        { by: (locks) => locks.forceUnlock('rw'), spublish: 1 },
      );
      // The fair lock: '0' on the plain channel and on each queued waiter's own channel.
      await wokenBySharded(
        'fair',
        (key) => `${channelName(key)}:*`,
        (locks) => locks.acquire('fair', { fair: true }),
        (locks) => locks.acquire('fair', { fair: true }),
        { by: (locks) => locks.forceUnlock('fair'), spublish: 2 },
      );
      await wokenBySharded(
        'sem',
        semaphoreChannelName,
        (locks) => locks.semaphore('sem', { permits: 1 }).acquire(),
        (locks) => locks.semaphore('sem', { permits: 1 }).acquire(),
        { by: (locks) => locks.semaphore('sem', { permits: 1 }).forceUnlock(), spublish: 1 },
      );
    });

    /**
     * A LockService as in apps(), on a Cluster client of its own that counts its answered calls
     * of fair-acquire.lua. A fair waiter is asleep after its second: the first queues it, the
     * next one (its channel subscribed) catches a turn announced meanwhile; then only a notice
     * or the end of its 5 s wait wakes it.
     */
    async function countedApp(keyPrefix?: string) {
      const client = suite.cluster.client();
      const { sha, source } = LockScripts.fairAcquire;
      let answered = 0;
      const send = client.sendCommand.bind(client);
      client.sendCommand = (command: Command, ...rest) => {
        const script = String(command.args[0]);
        const name = command.name;
        if ((name === 'evalsha' && script === sha) || (name === 'eval' && script === source)) {
          void command.promise.then(
            () => answered++,
            () => undefined,
          );
        }
        return send(command, ...rest);
      };
      const { app, locks, prefix } = await clusterApp(suite.cluster, {
        client,
        keyPrefix,
        leaseTime: 30_000,
        waitTime: 5_000,
      });
      closers.push(() => app.close());
      return { locks, prefix, attempts: () => answered };
    }

    it('a fair waiter whose head gives up while the lock is free (fair-leave.lua)', async () => {
      const head = await countedApp();
      const next = await countedApp(head.prefix);
      const key = `${head.prefix}fair`;
      const raw = suite.cluster.client();
      // A foreign holder (a Redisson service's field) with a 30 s lease.
      await raw.hset(key, 'foreign:1', '1');
      await raw.pexpire(key, 30_000);
      const controller = new AbortController();
      const givingUp = head.locks.acquire('fair', { fair: true, signal: controller.signal });
      givingUp.catch(() => undefined); // awaited below
      await until(() => head.attempts() >= 2, 3_000); // first in line, asleep for the lease
      const waiting = next.locks.acquire('fair', { fair: true });
      waiting.catch(() => undefined); // awaited below
      await until(() => next.attempts() >= 2, 3_000); // second, asleep for the head's place
      expect(await raw.llen(fairQueueName(key))).toBe(2);
      // The lease ends with no notice (as when it runs out): the head sleeps on, the lock is free.
      await raw.del(key);
      await suite.cluster.resetStats();
      const started = Date.now();
      controller.abort();
      await expect(givingUp).rejects.toThrow();
      const got = await waiting;
      expect(Date.now() - started).toBeLessThan(2_000); // not the end of its 5 s wait
      expect(await publishes()).toEqual({ spublish: 1, publish: 0 });
      await got.release();
      expect(await raw.llen(fairQueueName(key))).toBe(0);
    });

    it('a fair waiter that an attempt finds at the head of the queue (fair-acquire.lua)', async () => {
      const waiter = await countedApp();
      const caller = await countedApp(waiter.prefix);
      const key = `${waiter.prefix}fair`;
      const raw = suite.cluster.client();
      // The lock is free, but another client's waiter is queued ahead, its place good for 60 s.
      await raw.rpush(fairQueueName(key), 'gone:1');
      await raw.zadd(fairTimeoutName(key), Date.now() + 60_000, 'gone:1');
      const waiting = waiter.locks.acquire('fair', { fair: true });
      waiting.catch(() => undefined); // awaited below
      await until(() => waiter.attempts() >= 2, 3_000); // second in line, asleep
      expect(await raw.lrange(fairQueueName(key), 0, 0)).toEqual(['gone:1']);
      // Its place ends early (the deadline set in the past here): no script runs, nobody is told.
      await raw.zadd(fairTimeoutName(key), Date.now() - 1_000, 'gone:1');
      await suite.cluster.resetStats();
      const started = Date.now();
      // A single attempt drops the dead head, is refused (the waiter is next) and tells the waiter.
      expect(await caller.locks.tryAcquire('fair', { fair: true })).toBeNull();
      const got = await waiting;
      expect(Date.now() - started).toBeLessThan(2_000); // not the end of its 5 s wait
      expect(await publishes()).toEqual({ spublish: 1, publish: 0 });
      await got.release();
      expect(await raw.llen(fairQueueName(key))).toBe(0);
    });
  });

  it('runs every kind on a cluster with the KEYS of each script call in one slot', async () => {
    const client = suite.cluster.client();
    const calls: string[][] = [];
    const send = client.sendCommand.bind(client);
    client.sendCommand = (command: Command, ...rest) => {
      if (command.name === 'evalsha' || command.name === 'eval') {
        const args = command.args.map(String);
        calls.push(args.slice(2, 2 + Number(args[1])));
      }
      return send(command, ...rest);
    };
    const { app, locks, prefix } = await clusterApp(suite.cluster, { client, leaseTime: 30_000 });
    closers.push(() => app.close());
    const fenced = await locks.acquire('fenced', { fencing: true });
    expect(fenced.fencingToken).toBeDefined();
    await fenced.release();
    const fair = await locks.acquire('fair', { fair: true });
    const queued = locks.acquire('fair', { fair: true, waitTime: 5_000 });
    await sleep(50);
    await fair.release();
    await (await queued).release();
    for (const mode of ['read', 'write'] as const) {
      await (await locks.acquire('rw', { mode })).release();
    }
    const permit = await locks.semaphore('permits', { permits: 2 }).acquire();
    await permit.release();
    const group = await locks.acquire(spreadKeys(prefix, 3));
    await group.release();
    expect(await locks.forceUnlock('fenced')).toBe(false);
    expect(calls.length).toBeGreaterThan(10);
    // renew-node.lua alone declares no key (locks of many slots in ARGV); none ran here.
    const crossSlot = calls.filter((keys) => new Set(keys.map(keySlot)).size !== 1);
    expect(crossSlot).toEqual([]);
  });
});
