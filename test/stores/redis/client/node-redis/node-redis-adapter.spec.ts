import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { createClient } from 'redis';
import { LockInspector, LockOptionsError, LockService, RedisLockModule } from '../../../../../lib';
import { nodeRedisClient } from '../../../../../lib/node-redis';
import { isReplyError, ready } from '../../../../../lib/stores/redis';
import {
  NodeRedisSubscriber,
  nodeRedisServer,
} from '../../../../../lib/stores/redis/client/node-redis';
import { Test } from '@nestjs/testing';
import { destroy } from '../../../../support/node-redis-server';
import { suiteRedis } from '../../../../support/suite-redis';
import { until } from '../../../../../tools/time';

const LIB = join(__dirname, '../../../../../lib');

/** Every .ts file under `dir`, relative to lib/. */
function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sources(path);
    return entry.name.endsWith('.ts') ? [relative(LIB, path)] : [];
  });
}

/** The node-redis adapter's mapping of node-redis onto the client port, on a real server. */
describe('the node-redis adapter', () => {
  const server = suiteRedis();
  const opened: { readonly isOpen: boolean; destroy(): void }[] = [];
  afterEach(() => {
    for (const client of opened.splice(0)) destroy(client);
  });
  /** A node-redis client on the suite's server (RESP 3, node-redis 6's default, unless told). */
  function client(RESP: 2 | 3 = 3) {
    const made = createClient({ url: server.redis.url, RESP });
    made.on('error', () => undefined);
    opened.push(made);
    return made;
  }

  it('is loaded by no file of lib/: node-redis is an optional peer', () => {
    const importsNodeRedis =
      /(?:from\s+|import\s*\(\s*|require\s*\(\s*)['"](?:redis|@redis\/[^'"]+)['"]/;
    const importing = sources(LIB).filter((file) =>
      importsNodeRedis.test(readFileSync(join(LIB, file), 'utf8')),
    );
    expect(importing).toEqual([]);
  });

  it('maps the client life onto the port: wait, ready, close and ready again, end', async () => {
    const redis = client();
    const port = nodeRedisServer(redis);
    expect(port.status).toBe('wait');
    await ready(port, 5_000);
    expect(port.status).toBe('ready');
    const events: string[] = [];
    port.on('close', () => events.push('close'));
    port.on('ready', () => events.push('ready'));
    const id = await port.command('client', ['id']);
    await server.raw.call('CLIENT', 'KILL', 'ID', String(id)); // node-redis reconnects
    await until(() => events.includes('ready'), 5_000);
    expect(events[0]).toBe('close');
    port.disconnect();
    expect(port.status).toBe('end');
  });

  it.each([2, 3] as const)(
    'answers as RESP2 does on a RESP %i connection: scripts, maps, sorted sets, INFO',
    async (resp) => {
      const port = nodeRedisServer(client(resp));
      await ready(port, 5_000);
      expect(await port.eval('return {1, true, false}', 0, [])).toEqual([1, 1, null]);
      expect(await port.eval('return false', 0, [])).toBeNull();
      expect(await port.eval('return KEYS[1] .. ARGV[1]', 1, ['k', 7])).toBe('k7');
      await server.raw.hset(`h${resp}`, 'a', '1');
      await server.raw.zadd(`z${resp}`, 2, 'm');
      expect(await port.command('hgetall', [`h${resp}`])).toEqual({ a: '1' }); // as ioredis
      expect(await port.command('zrange', [`z${resp}`, 0, -1, 'WITHSCORES'])).toEqual(['m', '2']);
      expect(await port.command('pubsub', ['numsub', 'nobody'])).toEqual(['nobody', 0]);
      expect(await port.info('server')).toMatch(/^# Server/);
      expect(await port.hget(`h${resp}`, 'a')).toBe('1');
    },
  );

  it('settles each command of a pipeline on its own: a refused script, then WAIT', async () => {
    const port = nodeRedisServer(client());
    await ready(port, 5_000);
    const [[scriptError], [waitError, acknowledged]] = await port.pipeline([
      ['evalsha', 'f'.repeat(40), 0],
      ['wait', 0, 10],
    ]);
    expect(scriptError?.message).toMatch(/^NOSCRIPT/);
    expect(isReplyError(scriptError)).toBe(true);
    expect([waitError, acknowledged]).toEqual([null, 0]);
  });

  it('tells a reply error from a link failure', async () => {
    const port = nodeRedisServer(client());
    await ready(port, 5_000);
    const refused = await port.evalsha('0'.repeat(40), 0, []).catch((error: unknown) => error);
    expect(isReplyError(refused)).toBe(true);
    const closed = createClient({ url: 'redis://127.0.0.1:1' });
    const unsent = await closed.sendCommand(['PING']).catch((error: unknown) => error);
    expect(unsent).toBeInstanceOf(Error);
    expect(isReplyError(unsent)).toBe(false);
  });

  it('delivers a subscribed channel’s messages once, however many times it is subscribed', async () => {
    const subscriber = new NodeRedisSubscriber(client().duplicate(), false);
    opened.push(subscriber.redis);
    await ready(subscriber, 5_000);
    const got: string[] = [];
    await subscriber.subscribe('ch', (channel) => got.push(channel));
    await subscriber.subscribe('ch', (channel) => got.push(channel));
    await server.raw.publish('ch', 'x');
    await until(() => got.length > 0, 2_000);
    await subscriber.unsubscribe('ch');
    await server.raw.publish('ch', 'y');
    expect(got).toEqual(['ch']);
  });

  it('connects the user’s client at startup, and leaves it open at shutdown', async () => {
    const redis = client();
    const moduleRef = await Test.createTestingModule({
      imports: [RedisLockModule.forRoot({ client: nodeRedisClient(redis) })],
    }).compile();
    const app = moduleRef.createNestApplication({ logger: false });
    await app.init();
    expect(redis.isReady).toBe(true);
    const lock = await app.get(LockService).acquire('owned');
    await lock.release();
    await app.close();
    expect(redis.isReady).toBe(true);
  });

  it('gives an application’s LockInspector what it reads on a RESP3 connection', async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [RedisLockModule.forRoot({ client: nodeRedisClient(client()), appName: 'nr-app' })],
    }).compile();
    const app = moduleRef.createNestApplication({ logger: false });
    await app.init();
    try {
      const locks = app.get(LockService);
      const inspector = app.get(LockInspector);
      await using _lock = await locks.acquire('inspected');
      await using _permit = await locks.semaphore('sem', { permits: 3 }).acquire();
      const lock = await inspector.describe('inspected');
      expect(lock.kind).toBe('plain');
      expect(lock.holders[0].client?.app).toBe('nr-app');
      const sem = await inspector.describe('sem'); // permits: ZRANGE WITHSCORES
      expect(sem.permits).toEqual({ used: 1, free: 2 });
      expect(sem.holders[0].ttl).toBeGreaterThan(0);
      expect((await inspector.list()).map((summary) => summary.key).sort()).toEqual([
        'inspected',
        'sem',
      ]);
      expect((await inspector.clients()).find((c) => c.client?.app === 'nr-app')?.locks).toBe(2);
    } finally {
      await app.close();
    }
  });

  it('is refused at boot unwrapped, naming nodeRedisClient; a Sentinel client is refused', async () => {
    const raw = client();
    await expect(
      Test.createTestingModule({
        imports: [RedisLockModule.forRoot({ client: raw as never })],
      }).compile(),
    ).rejects.toThrow(/wrap it with nodeRedisClient from nestjs-redis-lock\/node-redis/);
    expect(() => nodeRedisClient({ getMasterNode: () => undefined } as never)).toThrow(
      LockOptionsError,
    );
    expect(() => nodeRedisClient({} as never)).toThrow(/expects a node-redis client/);
  });
});
