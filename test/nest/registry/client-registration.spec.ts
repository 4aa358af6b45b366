import { hostname } from 'node:os';
import type { LockEngine } from '../../../lib/core';
import { LOCK_ENGINE, LockAcquireTimeoutError, type LockService } from '../../../lib';
import { LIBRARY_VERSION } from '../../../lib/version';
import { killChildren } from '../../support/child-processes';
import { holderProcess, removeHolderBuild } from '../../support/holder-process';
import { lockApp, type LockApp } from '../../support/lock-app';
import { suiteRedis } from '../../support/suite-redis';
import { sleep } from '../../../tools/time';

/** The registry record of client `id`, parsed, or null. */
async function record(raw: ReturnType<typeof suiteRedis>['raw'], id: string) {
  const json = await raw.get(`redisson_lock_client:{${id}}`);
  return json === null ? null : (JSON.parse(json) as Record<string, unknown>);
}

describe('client registry', () => {
  const server = suiteRedis();
  const apps: LockApp[] = [];
  afterEach(async () => {
    await killChildren();
    for (const app of apps.splice(0)) await app.app.close();
  });
  afterAll(() => removeHolderBuild());

  async function app(options: Parameters<typeof lockApp>[1] = {}) {
    const opened = await lockApp(server.redis, options);
    apps.push(opened);
    return opened;
  }

  it('registers app, host, pid, version, start and prefix under its client id, with a TTL of one lease, and removes it on close', async () => {
    const before = Date.now();
    const { app: nest, prefix } = await app({ appName: 'billing', leaseTime: 3_000 });
    const id = nest.get<LockEngine>(LOCK_ENGINE).clientId;
    await sleep(50); // the first write is sent at startup, unawaited
    expect(await record(server.raw, id)).toEqual({
      id,
      app: 'billing',
      host: hostname(),
      pid: process.pid,
      version: LIBRARY_VERSION,
      startedAt: expect.any(Number) as number,
      keyPrefix: prefix,
    });
    expect((await record(server.raw, id))!.startedAt).toBeGreaterThanOrEqual(before);
    const ttl = await server.raw.pttl(`redisson_lock_client:{${id}}`);
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(3_000);
    // Refreshed every third of the lease: still there after two leases.
    await sleep(2_000);
    expect(await server.raw.pttl(`redisson_lock_client:{${id}}`)).toBeGreaterThan(1_000);
    await nest.close();
    apps.length = 0;
    expect(await record(server.raw, id)).toBeNull();
  });

  it('registers nothing with clientRegistry: false', async () => {
    const { app: nest, locks } = await app({ clientRegistry: false, leaseTime: 300 });
    const id = nest.get<LockEngine>(LOCK_ENGINE).clientId;
    await locks.run('quiet', () => sleep(200)); // past a refresh period
    expect(await server.raw.exists(`redisson_lock_client:{${id}}`)).toBe(0);
  });

  it("the owner fields' uuid is the registered client id", async () => {
    const { app: nest, locks, prefix } = await app();
    const id = nest.get<LockEngine>(LOCK_ENGINE).clientId;
    await using _lock = await locks.acquire('owned');
    const fields = await server.raw.hkeys(`${prefix}owned`);
    expect(fields).toHaveLength(1);
    expect(fields[0].startsWith(`${id}:`)).toBe(true);
  });

  it('a SIGKILLed process disappears within a lease (plus a margin)', async () => {
    const lease = 1_000;
    const holder = await holderProcess(server.redis.url, 'reg:', 'killed-app', lease);
    const key = `redisson_lock_client:{${holder.clientId}}`;
    await sleep(lease); // alive past its first TTL: refreshed
    expect(await record(server.raw, holder.clientId)).toMatchObject({
      app: 'killed-app',
      pid: holder.pid,
    });
    holder.child.kill();
    const killedAt = Date.now();
    while ((await server.raw.exists(key)) === 1) await sleep(25);
    expect(Date.now() - killedAt).toBeLessThan(lease + 500);
  });

  describe('LockAcquireTimeoutError.holder', () => {
    let locks: LockService;
    let prefix: string;
    beforeEach(async () => ({ locks, prefix } = await app({ waitTime: 100 })));

    it('names the registered process that holds the lock', async () => {
      const holder = await holderProcess(server.redis.url, prefix, 'holder-app');
      await holder.send('lock busy');
      const error = await locks.acquire('busy').catch((e: unknown) => e);
      expect(error).toBeInstanceOf(LockAcquireTimeoutError);
      expect((error as LockAcquireTimeoutError).holder).toEqual({
        app: 'holder-app',
        host: hostname(),
        pid: holder.pid,
      });
      expect((error as Error).message).toContain(
        `app holder-app on host ${hostname()}, pid ${holder.pid}`,
      );
      // run() reports it too.
      const ran = await locks.run('busy', () => 1).catch((e: unknown) => e);
      expect((ran as LockAcquireTimeoutError).holder?.pid).toBe(holder.pid);
    });

    it('is undefined for an unregistered (Redisson) holder and for this process', async () => {
      await server.raw.hset(`${prefix}java`, '6f1c6a1e-0000-4000-8000-000000000000:42', 1);
      await server.raw.pexpire(`${prefix}java`, 30_000);
      const java = await locks.acquire('java').catch((e: unknown) => e);
      expect(java).toBeInstanceOf(LockAcquireTimeoutError);
      expect((java as LockAcquireTimeoutError).holder).toBeUndefined();
      await using _held = await locks.acquire('mine');
      const mine = await locks.detach(() => locks.acquire('mine')).catch((e: unknown) => e);
      expect((mine as LockAcquireTimeoutError).heldByThisProcess).toBe(true);
      expect((mine as LockAcquireTimeoutError).holder).toBeUndefined();
    });
  });
});
