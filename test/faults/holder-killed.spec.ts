import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { join } from 'node:path';
import { startRedis, type TestRedis } from '../support/redis-server';
import {
  LEASE,
  fastRedis,
  lockNode,
  sleep,
  watchUnhandledRejections,
  type LockNode,
} from './fault-kit';

/** Margin over the lease for the waiter to notice the expiry and take the lock. */
const MARGIN = 500;

describe('fault: the holder process SIGKILLed (its own redis-server)', () => {
  watchUnhandledRejections();
  let redis: TestRedis;
  let node: LockNode;
  const children: ChildProcessWithoutNullStreams[] = [];

  beforeAll(async () => {
    redis = await startRedis({ control: true });
    node = await lockNode(fastRedis(redis.port), { fencing: true });
  });
  afterAll(async () => {
    for (const child of children) child.kill('SIGKILL');
    await node?.close();
    await redis?.stop();
  });

  /** Starts a child that holds `key`; resolves with its fencing token once it holds it. */
  async function holderProcess(key: string, explicit: boolean) {
    const child = spawn(
      process.execPath,
      [
        '-r',
        'ts-node/register/transpile-only',
        join(__dirname, 'holder-child.ts'),
        redis.url,
        node.prefix,
        key,
        String(LEASE),
        ...(explicit ? ['explicit'] : []),
      ],
      { stdio: ['pipe', 'pipe', 'pipe'] },
    );
    children.push(child);
    let output = '';
    let errors = '';
    child.stderr.on('data', (data: Buffer) => (errors += data.toString()));
    const token = await new Promise<number>((resolve, reject) => {
      child.stdout.on('data', (data: Buffer) => {
        output += data.toString();
        const held = /held (\d+)\n/.exec(output);
        if (held) resolve(Number(held[1]));
      });
      child.once('exit', (code) => reject(new Error(`holder exited ${code}: ${errors}`)));
    });
    return { child, token };
  }

  it.each([
    ['a watchdog-renewed lock', false],
    ['a lock with an explicit lease', true],
  ])(
    '%s: a waiter gets it within the lease plus a margin, with a newer fencing token',
    async (_what, explicit) => {
      const key = explicit ? 'killed:explicit' : 'killed:watchdog';
      const { child, token } = await holderProcess(key, explicit);
      // Held by the child; the watchdog keeps it past its lease while the child lives.
      if (!explicit) await sleep(LEASE + 100);
      expect(await node.locks.tryAcquire(key)).toBeNull();
      const waiting = node.locks.acquire(key, { waitTime: 10_000 });
      child.kill('SIGKILL');
      const killedAt = Date.now();
      const lock = await waiting;
      const tookOver = Date.now() - killedAt;
      expect(tookOver).toBeLessThan(LEASE + MARGIN);
      expect(lock.fencingToken).toBeGreaterThan(token);
      await lock.release();
    },
    30_000,
  );
});
