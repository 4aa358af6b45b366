import { hostname } from 'node:os';
import { randomUUID } from 'node:crypto';
import {
  LockError,
  LockInspector,
  LockService,
  RedisLockModule,
  type LockDescription,
} from '../../lib';
import { Test } from '@nestjs/testing';
import { killChildren } from '../support/child-processes';
import { holderProcess, removeHolderBuild, type HolderProcess } from '../support/holder-process';
import { lockApp, type LockApp } from '../support/lock-app';
import { suiteRedis } from '../support/suite-redis';
import { sleep } from '../../tools/time';

/** A Redisson client's owner field: `<uuid>:<thread id>`. */
const JAVA_CLIENT = '6f1c6a1e-1111-4000-8000-00000000cafe';

/** Polls `read` until `done` holds of its result (event-free: Redis state set by other processes). */
async function until<T>(read: () => Promise<T>, done: (value: T) => boolean): Promise<T> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const value = await read();
    if (done(value) || Date.now() > deadline) return value;
    await sleep(20);
  }
}

describe('LockInspector', () => {
  const server = suiteRedis();
  const prefix = `i:${randomUUID().slice(0, 8)}:`;
  let inspector: LockInspector;
  let holder: HolderProcess;
  let local: LockApp;

  beforeAll(async () => {
    inspector = server.closing(
      await LockInspector.connect({ redis: server.redis.url, keyPrefix: prefix }),
    );
    holder = await holderProcess(server.redis.url, prefix, 'holder-app');
    local = await lockApp(server.redis, { keyPrefix: prefix, appName: 'local-app' });
    server.closing(local.app);
  });
  afterAll(async () => {
    await killChildren();
    removeHolderBuild();
  });

  const appOf = (lock: LockDescription) => lock.holders.map((h) => h.client?.app);

  it('a free key: kind free, nobody, no lease, nobody waits', async () => {
    expect(await inspector.describe('nothing')).toEqual({
      key: 'nothing',
      name: `${prefix}nothing`,
      kind: 'free',
      redisType: 'none',
      holders: [],
      ttl: null,
      fencingToken: undefined,
      queue: [],
      permits: undefined,
      waiting: 0,
    });
  });

  it('a plain lock held by another process: its app, host, pid, lease and fencing token; its waiters', async () => {
    await holder.send('lock plain');
    const lock = await inspector.describe('plain');
    expect(lock.kind).toBe('plain');
    expect(lock.holders).toEqual([
      {
        owner: expect.stringMatching(new RegExp(`^${holder.clientId}:\\d+$`)) as string,
        clientId: holder.clientId,
        holdCount: 1,
        client: expect.objectContaining({
          id: holder.clientId,
          app: 'holder-app',
          host: hostname(),
          pid: holder.pid,
          keyPrefix: prefix,
        }) as object,
      },
    ]);
    expect(lock.ttl).toBeGreaterThan(0);
    expect(lock.ttl).toBeLessThanOrEqual(30_000);
    expect(lock.fencingToken).toEqual(expect.any(Number));
    expect(lock.waiting).toBe(0);
    // This process waits for it: one process subscribed to its channel.
    const waiting = local.locks.acquire('plain', { waitTime: 20_000 }).catch(() => undefined);
    expect(
      (
        await until(
          () => inspector.describe('plain'),
          (l) => l.waiting === 1,
        )
      ).waiting,
    ).toBe(1);
    void waiting;
  });

  it("a Redisson-layout hash written directly: the owner field and hold count, an 'unknown client'", async () => {
    await server.raw.hset(`${prefix}java`, `${JAVA_CLIENT}:57`, 2);
    await server.raw.pexpire(`${prefix}java`, 20_000);
    const lock = await inspector.describe('java');
    expect(lock.kind).toBe('plain');
    expect(lock.holders).toEqual([
      { owner: `${JAVA_CLIENT}:57`, clientId: JAVA_CLIENT, holdCount: 2, client: undefined },
    ]);
    expect(lock.fencingToken).toBeUndefined();
  });

  it('a read-write lock: every reader with its mode and process; then a writer', async () => {
    await holder.send('read rw');
    await using _read = await local.locks.acquire('rw', { mode: 'read' });
    const read = await inspector.describe('rw');
    expect(read.kind).toBe('read-write');
    expect(read.holders.map((h) => h.mode)).toEqual(['read', 'read']);
    expect(appOf(read).sort()).toEqual(['holder-app', 'local-app']);

    await holder.send('write rw-w');
    const written = await inspector.describe('rw-w');
    expect(written.kind).toBe('read-write');
    expect(written.holders).toEqual([
      expect.objectContaining({ clientId: holder.clientId, mode: 'write', holdCount: 1 }),
    ]);
    const waiting = local.locks
      .acquire('rw-w', { mode: 'read', waitTime: 20_000 })
      .catch(() => undefined);
    const seen = await until(
      () => inspector.describe('rw-w'),
      (l) => l.waiting === 1,
    );
    expect(seen.waiting).toBe(1);
    void waiting;
  });

  it('a fair lock: its holder and its queue in order, each waiter with its deadline', async () => {
    await holder.send('fair fair');
    const second = await holderProcess(server.redis.url, prefix, 'second-app');
    await second.send('fairwait fair');
    await until(
      () => inspector.describe('fair'),
      (l) => l.queue.length === 1,
    );
    const waiting = local.locks
      .acquire('fair', { fair: true, waitTime: 20_000 })
      .catch(() => undefined);
    const lock = await until(
      () => inspector.describe('fair'),
      (l) => l.queue.length === 2,
    );
    expect(lock.kind).toBe('fair');
    expect(appOf(lock)).toEqual(['holder-app']);
    expect(lock.queue.map((q) => q.client?.app)).toEqual(['second-app', 'local-app']);
    for (const queued of lock.queue) expect(queued.deadline).toBeGreaterThan(Date.now() - 1_000);
    expect(lock.waiting).toBe(2);
    void waiting;
  });

  it('a semaphore: permits used and free, each permit holder with its lease', async () => {
    await holder.send('permit sem 3');
    await using _permit = await local.locks.semaphore('sem', { permits: 3 }).acquire();
    const sem = await inspector.describe('sem');
    expect(sem.kind).toBe('semaphore');
    expect(sem.permits).toEqual({ used: 2, free: 1 });
    expect(appOf(sem).sort()).toEqual(['holder-app', 'local-app']);
    for (const permit of sem.holders) expect(permit.ttl).toBeGreaterThan(0);
  });

  it('list(): held locks by pattern, sorted, within the limit; clients(): each with its count', async () => {
    await holder.send('lock list:a');
    await holder.send('lock list:b');
    await using _c = await local.locks.acquire('list:c');
    await server.raw.set(`${prefix}list:not-a-lock`, 'x');
    await server.raw.hset(`${prefix}list:java`, `${JAVA_CLIENT}:1`, 1);
    const listed = await inspector.list({ match: 'list:*' });
    expect(listed.map((l) => [l.key, l.holders[0].client?.app])).toEqual([
      ['list:a', 'holder-app'],
      ['list:b', 'holder-app'],
      ['list:c', 'local-app'],
      ['list:java', undefined],
    ]);
    expect(await inspector.list({ match: 'list:*', limit: 2 })).toHaveLength(2);
    const all = (await inspector.list()).map((l) => l.key);
    expect(all).toEqual(expect.arrayContaining(['plain', 'java', 'rw', 'fair', 'sem', 'list:a']));
    expect(all).not.toContain('nothing');

    const clients = await inspector.clients({ match: 'list:*' });
    const count = (id: string) => clients.find((c) => c.clientId === id)?.locks;
    expect(count(holder.clientId)).toBe(2);
    expect(count(JAVA_CLIENT)).toBe(1);
    expect(clients.find((c) => c.clientId === JAVA_CLIENT)?.client).toBeUndefined();
    expect(clients.at(-1)?.clientId).toBe(JAVA_CLIENT); // unknown clients last
    expect(clients.find((c) => c.client?.app === 'local-app')?.locks).toBe(1);
  });

  it('is provided by the module on its connection and keyPrefix; with the memory store it rejects', async () => {
    const injected = local.app.get(LockInspector);
    expect((await injected.describe('plain')).holders[0].clientId).toBe(holder.clientId);
    await injected.close(); // closes nothing of the module's
    expect(await local.locks.isLocked('plain')).toBe(true);

    const moduleRef = await Test.createTestingModule({
      imports: [RedisLockModule.forTesting()],
    }).compile();
    await expect(moduleRef.get(LockInspector).describe('x')).rejects.toThrow(LockError);
    await expect(moduleRef.get(LockInspector).list()).rejects.toThrow(/reads Redis/);
    expect(moduleRef.get(LockService)).toBeDefined();
    await moduleRef.close();
  });

  it('connect() refuses an unreachable address and bad options', async () => {
    await expect(
      LockInspector.connect({ redis: 'redis://127.0.0.1:1', connectTimeout: 2_000 }),
    ).rejects.toThrow(/Cannot reach Redis at 127\.0\.0\.1:1/);
    await expect(LockInspector.connect({})).rejects.toThrow(/exactly one of redis and cluster/);
    await expect(inspector.list({ limit: 0 })).rejects.toThrow(/limit/);
  });
});
