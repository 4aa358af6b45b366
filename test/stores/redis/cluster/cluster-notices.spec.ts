import type { Command } from 'ioredis';
import type { LockService } from '../../../../lib';
import { LockScripts } from '../../../../lib/stores/redis/lock-scripts';
import {
  channelName,
  fairQueueName,
  fairTimeoutName,
  rwChannelName,
  semaphoreChannelName,
} from '../../../../lib/stores/redis/redis-names';
import { clusterApp, clusterAppSuite } from './cluster-kit';
import { until } from '../../../../tools/time';

/**
 * Release notices on a 3-master Redis Cluster (one for the file): every kind's waiter is woken by a
 * sharded notice (SPUBLISH/SSUBSCRIBE, as Redisson), never by classic PUBLISH.
 */
describe('a sharded notice wakes waiters of every kind on a Redis Cluster', () => {
  const { suite, closers, apps } = clusterAppSuite();

  /** Shard channels matching `pattern` subscribed on the master of `key`'s slot. */
  async function shardChannels(key: string, pattern: string): Promise<string[]> {
    const port = await suite.cluster.masterForKey(key);
    return (await suite.cluster.admin
      .get(port)
      .call('PUBSUB', 'SHARDCHANNELS', pattern)) as string[];
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
    expect(await suite.cluster.publishes()).toEqual({ spublish: free?.spublish ?? 1, publish: 0 });
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
    expect(await suite.cluster.publishes()).toEqual({ spublish: 1, publish: 0 });
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
    expect(await suite.cluster.publishes()).toEqual({ spublish: 1, publish: 0 });
    await got.release();
    expect(await raw.llen(fairQueueName(key))).toBe(0);
  });
});
