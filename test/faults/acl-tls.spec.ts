import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { LockError, LockLostError, LockRedisError } from '../../lib';
import { freePort, type TestRedis } from '../support/redis-server';
import { LEASE, fastRedis, faultRedis, logged, settled, type LockNode } from './fault-kit';
import { sleep, until } from '../../tools/time';

/**
 * The minimal command set of docs/reliability.md: what the library sends itself, then what its
 * scripts call. (Add +info to keep ioredis' ready check, which the nodes here turn off.)
 */
export const MINIMAL_COMMANDS = [
  'evalsha',
  'script|load',
  'pttl',
  'hlen',
  'subscribe',
  'unsubscribe',
  'hset',
  'hget',
  'hexists',
  'hdel',
  'lrange',
  'pexpire',
  'incr',
  'time',
  'del',
  'get',
  'set',
  'publish',
];

/** Every operation of the library, as one user would run them; throws on the first failure. */
async function everyOperation(node: LockNode, raw: Redis, key: string) {
  const name = `${node.prefix}${key}`;
  const logLines = logged.length;
  // acquire with a fencing token, re-entry, a waiter woken by the release message.
  const held = await node.locks.acquire(key, { fencing: true });
  expect(held.fencingToken).toBeGreaterThan(0);
  await node.locks.runAs(held, () => node.locks.run(key, () => undefined));
  expect(await node.locks.tryAcquire(key)).toBeNull(); // another call chain: busy
  let wokenAfter = -1;
  const waiter = node.locks.run(key, () => undefined, { waitTime: 2_000 });
  waiter.catch(() => undefined); // observed below; a step failing before that must not leave it unhandled
  await sleep(LEASE + 100); // a watchdog renewal happens meanwhile
  expect(held.signal.aborted).toBe(false);
  expect(await node.locks.isLocked(key)).toBe(true);
  expect(await node.locks.remainingTtl(key)).toBeGreaterThan(0);
  const releasedAt = Date.now();
  await held.release();
  await waiter;
  wokenAfter = Date.now() - releasedAt;
  expect(wokenAfter).toBeLessThan(LEASE / 2); // by the message, not by the TTL fallback
  expect(await raw.exists(name)).toBe(0);
  // forceUnlock tells the holder; an explicit lease that ran out is reported at release.
  const forced = await node.locks.acquire(`${key}:forced`);
  expect(await node.locks.forceUnlock(`${key}:forced`)).toBe(true);
  expect(forced.signal.reason).toBeInstanceOf(LockLostError);
  await expect(forced.release()).rejects.toBeInstanceOf(LockLostError);
  const leased = await node.locks.acquire(`${key}:leased`, { leaseTime: 100 });
  await until(() => leased.signal.aborted, 1_000);
  await expect(leased.release()).rejects.toBeInstanceOf(LockLostError);
  // Nothing failed silently (a refused release or renewal is only logged).
  expect(logged.slice(logLines).filter((l) => / failed/.test(l.message))).toEqual([]);
}

describe('security: minimal ACL, key patterns per keyPrefix, TLS (their own redis-servers)', () => {
  const suite = faultRedis();
  let redis: TestRedis;
  let raw: Redis;
  const asUser = (username: string) =>
    fastRedis(redis.port, { username, password: 'pw', enableReadyCheck: false });

  beforeAll(() => ({ redis, raw } = suite));

  it('a user allowed only the documented minimal command set can run every operation', async () => {
    await raw.acl(
      'SETUSER',
      'locker',
      'on',
      '>pw',
      '~*',
      '&*',
      '-@all',
      ...MINIMAL_COMMANDS.map((c) => `+${c}`),
    );
    const locker = await suite.node(asUser('locker'));
    await everyOperation(locker, raw, 'minimal');
    await locker.close(); // no QUIT permission needed either
  });

  it('without SUBSCRIBE, a waiter in the same process still gets the lock as soon as it is released', async () => {
    await raw.acl(
      'SETUSER',
      'nosub',
      'on',
      '>pw',
      '~*',
      '&*',
      '-@all',
      ...MINIMAL_COMMANDS.filter((c) => c !== 'subscribe').map((c) => `+${c}`),
    );
    const weak = await suite.node(asUser('nosub'), { leaseTime: 30_000 });
    const held = await weak.locks.acquire('nosub');
    const waiter = weak.locks.run('nosub', () => 'got it', { waitTime: 5_000 });
    await sleep(100); // its SUBSCRIBE was refused: no release message will come
    const releasedAt = Date.now();
    await held.release();
    await expect(waiter).resolves.toBe('got it');
    expect(Date.now() - releasedAt).toBeLessThan(1_000); // not the 30 s TTL fallback
    await weak.close();
  });

  // get (a resent release) is on a path that normal operation does not reach; the proxy suite
  // covers it.
  it.each(MINIMAL_COMMANDS.filter((c) => c !== 'get'))(
    'the minimal set cannot lose %s (the list is not padded)',
    async (command) => {
      await raw.acl(
        'SETUSER',
        `without-${command}`,
        'on',
        '>pw',
        '~*',
        '&*',
        '-@all',
        ...MINIMAL_COMMANDS.filter((c) => c !== command).map((c) => `+${c}`),
      );
      const weak = await suite.node(asUser(`without-${command}`), { shutdownTimeout: 50 });
      await raw.script('FLUSH');
      const logLines = logged.length;
      const failure = await settled(everyOperation(weak, raw, `without:${command}`));
      await weak.close(); // idle subscriptions are dropped here (UNSUBSCRIBE)
      const refusedAtClose = logged
        .slice(logLines)
        .some((line) => line.message.includes('NOPERM') && / failed/.test(line.message));
      expect(failure instanceof Error || refusedAtClose).toBe(true);
    },
  );

  it('key and channel patterns narrowed to one keyPrefix: that prefix works, another is refused', async () => {
    const patterns = (prefix: string) => [
      `~${prefix}*`,
      `~redisson_lock_token:{${prefix}*`,
      `~redisson_lock_token:${prefix}*`,
      `~redisson_unlock_latch:{${prefix}*`,
      `~redisson_unlock_latch:${prefix}*`,
      `~redisson_lock_queue:{${prefix}*`,
      `~redisson_lock_queue:${prefix}*`,
      `~redisson_lock_timeout:{${prefix}*`,
      `~redisson_lock_timeout:${prefix}*`,
      `&redisson_lock__channel:{${prefix}*`,
      `&redisson_lock__channel:${prefix}*`,
    ];
    await raw.acl(
      'SETUSER',
      'billing',
      'on',
      '>pw',
      'resetkeys',
      'resetchannels',
      ...patterns('billing:'),
      '-@all',
      ...MINIMAL_COMMANDS.map((c) => `+${c}`),
    );
    const billing = await suite.node(asUser('billing'), { keyPrefix: 'billing:' });
    await everyOperation(billing, raw, 'invoice:1');
    await everyOperation(billing, raw, '{invoice}:2'); // a hash-tagged key: the other aux names
    const intruder = await suite.node(asUser('billing'), { keyPrefix: 'shipping:' });
    const refused = await settled(intruder.locks.acquire('invoice:1', { waitTime: 0 }));
    expect(refused).toBeInstanceOf(LockRedisError);
    expect((refused as Error).message).toMatch(/NOPERM|permissions/i);
    expect(await raw.keys('shipping:*')).toEqual([]);
  });

  it('keyPrefix keeps two applications apart on one Redis: same key, two independent locks', async () => {
    const billing = await suite.node(fastRedis(redis.port), { keyPrefix: 'iso-billing:' });
    const shipping = await suite.node(fastRedis(redis.port), { keyPrefix: 'iso-shipping:' });
    const one = await billing.locks.acquire('order:1');
    const two = await shipping.locks.tryAcquire('order:1');
    expect(two).not.toBeNull();
    expect(await shipping.locks.forceUnlock('order:1')).toBe(true);
    expect(one.signal.aborted).toBe(false);
    expect(await raw.exists('iso-billing:order:1')).toBe(1);
    await one.release();
    await expect(two!.release()).rejects.toBeInstanceOf(LockLostError);
  });

  const haveOpenssl = spawnSync('openssl', ['version']).status === 0;
  (haveOpenssl ? it : it.skip)(
    'TLS and ACL credentials pass through the ioredis options (and a plain connection is refused)',
    async () => {
      const dir = mkdtempSync(join(tmpdir(), 'lock-tls-'));
      let server: ChildProcess | undefined;
      let secure: LockNode | undefined;
      try {
        const made = spawnSync(
          'openssl',
          [
            'req',
            '-x509',
            '-newkey',
            'ec',
            '-pkeyopt',
            'ec_paramgen_curve:prime256v1',
            '-nodes',
            '-keyout',
            join(dir, 'key.pem'),
            '-out',
            join(dir, 'cert.pem'),
            '-days',
            '1',
            '-subj',
            '/CN=127.0.0.1',
            '-addext',
            'subjectAltName=IP:127.0.0.1',
          ],
          { encoding: 'utf8' },
        );
        expect(made.status).toBe(0);
        const ca = readFileSync(join(dir, 'cert.pem'));
        const port = await freePort();
        server = spawn(
          process.env.REDIS_SERVER_BIN ?? 'redis-server',
          [
            '--port',
            '0',
            '--tls-port',
            String(port),
            '--bind',
            '127.0.0.1',
            '--tls-cert-file',
            join(dir, 'cert.pem'),
            '--tls-key-file',
            join(dir, 'key.pem'),
            '--tls-ca-cert-file',
            join(dir, 'cert.pem'),
            '--tls-auth-clients',
            'no',
            '--save',
            '',
            '--appendonly',
            'no',
          ],
          { stdio: 'ignore' },
        );
        // No servername: the certificate names the IP, and Node 26 refuses an IP as TLS ServerName.
        const tls = { ca };
        const admin = new Redis({ host: '127.0.0.1', port, tls, lazyConnect: true });
        admin.on('error', () => undefined);
        await until(async () => {
          try {
            if (admin.status !== 'ready') await admin.connect();
            return (await admin.ping()) === 'PONG';
          } catch {
            return false;
          }
        }, 10_000);
        await admin.acl('SETUSER', 'tlsuser', 'on', '>pw', '~*', '&*', '+@all');
        secure = await suite.node(
          { host: '127.0.0.1', port, tls, username: 'tlsuser', password: 'pw' },
          { keyPrefix: 'tls:' },
        );
        await everyOperation(secure, admin, 'secure');
        const clients = await admin.client('LIST');
        expect(String(clients)).toContain('user=tlsuser');
        // A plain connection to the TLS port: the startup check fails the bootstrap, naming it.
        const plain = await settled(
          suite.node(
            fastRedis(port, { maxRetriesPerRequest: 1, username: 'tlsuser', password: 'pw' }),
          ),
        );
        expect(plain).toBeInstanceOf(LockError);
        expect((plain as Error).message).toMatch(
          new RegExp(`^Cannot reach Redis at 127\\.0\\.0\\.1:${port}: `),
        );
        admin.disconnect();
      } finally {
        await secure?.close();
        server?.kill('SIGKILL');
        rmSync(dir, { recursive: true, force: true });
      }
    },
  );
});
