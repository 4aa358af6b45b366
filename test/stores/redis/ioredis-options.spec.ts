import { Cluster, Redis, type RedisOptions } from 'ioredis';
import {
  LockError,
  LockLostError,
  LockOptionsError,
  type LockHandle,
  type RedisLockModuleOptions,
} from '../../../lib';
import { lockApp } from '../../support/lock-app';
import { parseCommandstats } from '../../../tools/redis/topology-admin';
import type { TestRedis } from '../../support/redis-server';
import {
  LEASE,
  fastRedis,
  lockNode,
  proxiedRedis,
  settled,
  type LockNode,
  type TcpProxy,
} from '../../faults/fault-kit';
import { channelOf, monotonic, renewals, subscribers } from '../../faults/timing-kit';
import { startCluster, STEADY_NODE_TIMEOUT } from '../../../tools/redis/cluster';
import { sleep, until } from '../../../tools/time';

type LockApp = Awaited<ReturnType<typeof lockApp>>;

/** Long enough that a lock left behind would still be there when a test looks. */
const LONG_LEASE = 30_000;

describe('the user’s ioredis options and clients (its own redis-server)', () => {
  let redis: TestRedis;
  let raw: Redis; // one test stops the server: proxiedRedis() expects its errors
  let proxy: TcpProxy;
  let direct: LockNode;
  const nodes: LockNode[] = [];

  proxiedRedis({ leaseTime: LONG_LEASE }, (made) => ({ redis, raw, proxy, direct } = made));
  afterEach(async () => {
    for (const node of nodes.splice(0)) await node.close();
  });

  /** EVALSHA calls the server has run so far. */
  const evalshaCalls = async () => parseCommandstats(await raw.info('commandstats')).evalsha ?? 0;

  /** A lock node with these ioredis options, sharing `direct`'s key prefix; closed after the test. */
  async function node(port: number, redisOptions: RedisOptions, leaseTime = LONG_LEASE) {
    const created = await lockNode(fastRedis(port, redisOptions), {
      keyPrefix: direct.prefix,
      leaseTime,
    });
    nodes.push(created);
    return created;
  }

  it.each([
    ['commandTimeout: 200', { commandTimeout: 200 }, false],
    ['maxRetriesPerRequest: 0', { maxRetriesPerRequest: 0 }, true],
  ])(
    'an acquire whose reply is lost (%s): the caller gets an error, and the lock is freed once the connection answers',
    async (_, options, cutToFail) => {
      // issue 8, defect 7
      const slow = await node(proxy.port, options);
      const key = `ghost:${String(cutToFail)}`;
      const name = direct.prefix + key;
      await (await slow.locks.acquire(`${key}:warm`)).release(); // connected, scripts loaded
      proxy.dropReplies();
      const acquiring = settled(slow.locks.acquire(key, { waitTime: 1_000 }));
      await until(async () => (await raw.exists(name)) === 1, 1_000); // Redis granted it
      if (cutToFail) proxy.cut(); // the connection breaks: ioredis gives up on the command
      const outcome = await acquiring;
      proxy.cut();
      proxy.restore(); // the connection answers again
      const freed = await until(async () => (await raw.exists(name)) === 0, 2_000).then(
        () => true,
        () => false,
      );
      expect({ callerGotAnError: outcome instanceof LockError, freed }).toEqual({
        callerGotAnError: true,
        freed: true,
      });
    },
  );

  it('autoResubscribe: false is refused at startup, or waiters are still woken after a pub/sub reconnect', async () => {
    // issue 8, defect 8
    const created = await settled(node(redis.port, { autoResubscribe: false }));
    if (created instanceof Error) {
      expect(created).toBeInstanceOf(LockOptionsError);
      expect(created.message).toMatch(/autoResubscribe/);
      return;
    }
    const waiters = created as LockNode;
    const name = `${direct.prefix}resubscribe`;
    const held = await direct.locks.acquire('resubscribe');
    const waiting = settled(waiters.locks.acquire('resubscribe', { waitTime: 2_500 }));
    await until(async () => (await subscribers(raw, channelOf(name))) === 1, 1_000);
    await raw.call('CLIENT', 'KILL', 'TYPE', 'pubsub');
    // Back once the library has subscribed again (it may never: then the release goes unheard).
    await until(async () => (await subscribers(raw, channelOf(name))) === 1, 1_000).catch(
      () => undefined,
    );
    const releasedAt = monotonic();
    await held.release();
    const outcome = await waiting;
    const after = monotonic() - releasedAt;
    if (!(outcome instanceof Error)) await (outcome as LockHandle).release();
    expect({ gotTheLock: !(outcome instanceof Error), withinASecond: after < 1_000 }).toEqual({
      gotTheLock: true,
      withinASecond: true,
    });
  });

  it('autoResendUnfulfilledCommands: false: an attempt dropped on reconnect does not leave the key stuck; a later caller gets the free lock', async () => {
    // issue 8, defect 9
    const slow = await node(proxy.port, { autoResendUnfulfilledCommands: false }, LEASE);
    const name = `${direct.prefix}dropped`;
    // Another owner's explicit lease runs out 400 ms from now; the waiter retries then.
    await direct.locks.acquire('dropped', { leaseTime: 400 });
    const [directOwner] = Object.keys(await raw.hgetall(name));
    const attemptsBefore = await evalshaCalls();
    const first = settled(slow.locks.acquire('dropped', { waitTime: 1_000 }));
    await until(async () => (await subscribers(raw, channelOf(name))) === 1, 1_000);
    // Its attempt after subscribing (the second) has been answered, busy: Redis ran both, and a
    // PING sent after them on its connection came back, so their replies were read before it.
    await until(async () => (await evalshaCalls()) >= attemptsBefore + 2, 1_000);
    await (slow.locks as unknown as { store: { client: Redis } }).store.client.ping();
    proxy.dropReplies();
    // Its retry was granted: another owner holds the hash (until the unanswered attempt's bound
    // frees it, 600 ms; a PTTL above the first lease was visible for only 150 ms of that).
    await until(async () => {
      const owners = Object.keys(await raw.hgetall(name));
      return owners.length > 0 && !owners.includes(directOwner);
    }, 1_000);
    proxy.cut();
    proxy.restore(); // ioredis drops the unanswered attempt on reconnect
    const firstOutcome = await first; // a timeout, or the lock if the attempt was retried
    if (!(firstOutcome instanceof Error)) await (firstOutcome as LockHandle).release();
    // The granted attempt's lease (600 ms) runs out unrenewed; the lock is free from then on.
    const later = await settled(slow.locks.acquire('dropped', { waitTime: 2_000 }));
    const lockedInRedis = (await raw.exists(name)) === 1;
    if (!(later instanceof Error)) await (later as LockHandle).release();
    expect({ later: later instanceof Error ? later.name : 'got it', lockedInRedis }).toEqual({
      later: 'got it',
      lockedInRedis: true,
    });
  });

  it('enableOfflineQueue: false: calls right after app.init() work', async () => {
    // issue 8, defect 10
    const fresh = await node(redis.port, { enableOfflineQueue: false });
    const outcomes = await Promise.all([
      settled(fresh.locks.run('offline', () => 'ran')),
      settled(fresh.locks.isLocked('offline:other')),
      settled(fresh.locks.tryAcquire('offline:try').then((lock) => lock?.release())),
    ]);
    expect(outcomes).toEqual(['ran', false, undefined]);
  });

  it.each([
    ['in `redis` options', () => ({ redis: { port: redis.port, keyPrefix: 'app:' } })],
    [
      'on a given client',
      () => ({ redis: undefined, client: new Redis({ port: redis.port, keyPrefix: 'app:' }) }),
    ],
  ])(
    'ioredis keyPrefix %s is refused at startup with LockOptionsError naming it',
    async (_, options: () => Partial<RedisLockModuleOptions>) => {
      // issue 8, defect 18
      const given = options();
      const outcome = await settled(lockApp(redis, given));
      if (!(outcome instanceof Error)) await (outcome as LockApp).app.close();
      (given.client as Redis | undefined)?.disconnect();
      expect(outcome).toBeInstanceOf(LockOptionsError);
      expect((outcome as Error).message).toMatch(/keyPrefix/);
    },
  );

  it('a Cluster client is refused at startup with LockOptionsError naming `client`, or keeps locks of two slots renewed', async () => {
    // issue 8, defect 18 (until the scale-out issue supports Cluster: never silently wrong)
    // One master owning every slot; its node is never killed, so a loaded machine cannot fail it.
    const cluster = await startCluster({
      masters: 1,
      replicasPerMaster: 0,
      nodeTimeout: STEADY_NODE_TIMEOUT,
    });
    const [port] = cluster.ports;
    const client = new Cluster([{ host: '127.0.0.1', port }]);
    client.on('error', () => undefined);
    let app: LockApp | undefined;
    try {
      const created = await settled(
        lockApp(redis, { redis: undefined, client: client as unknown as Redis, leaseTime: LEASE }),
      );
      if (created instanceof Error) {
        expect(created).toBeInstanceOf(LockOptionsError);
        expect((created as LockOptionsError).option).toBe('client');
        return;
      }
      app = created as LockApp;
      // Two lock names in different hash slots, renewed by the watchdog for a few leases.
      const held = [await app.locks.acquire('slot:a'), await app.locks.acquire('slot:b')];
      const inspect = new Redis({ port, host: '127.0.0.1' });
      const renewed = await renewals(inspect, `${app.prefix}slot:b`, 3, LEASE * 3);
      inspect.disconnect();
      const lost = held.filter((lock) => lock.signal.aborted);
      const reasons = lost.map((lock) => (lock.signal.reason as LockLostError).reason);
      await Promise.all(held.map((lock) => lock.release().catch(() => undefined)));
      expect({ reasons, renewed }).toEqual({ reasons: [], renewed: true });
    } finally {
      await app?.app.close();
      client.disconnect();
      await cluster.stop();
    }
  });

  it('run() after a loss it knows of, while Redis is down with maxRetriesPerRequest: null, settles within 3 s', async () => {
    // issue 8, defect 11 (last: it stops the server)
    const patient = await node(redis.port, { maxRetriesPerRequest: null }, LEASE);
    let lock: LockHandle | undefined;
    const running = settled(
      patient.locks.run('down', async (held) => {
        lock = held;
        await new Promise((resolve) => held.signal.addEventListener('abort', resolve));
      }),
    );
    await until(() => lock !== undefined, 1_000);
    await redis.kill();
    const killedAt = monotonic();
    try {
      const outcome = await Promise.race([running, sleep(3_000).then(() => 'still pending')]);
      expect({ outcome, within: monotonic() - killedAt < 3_000 }).toEqual({
        outcome: expect.any(LockLostError),
        within: true,
      });
    } finally {
      await redis.restart();
      await running;
    }
  });
});
