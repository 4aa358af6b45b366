import { join } from 'node:path';
import { ChildLines, killChildren } from '../support/child-processes';
import { startRedis, type TestRedis } from '../support/redis-server';
import { LEASE, fastRedis, lockNode, watchUnhandledRejections, type LockNode } from './fault-kit';
import { sleep } from '../../tools/time';

/** Margin over the lease for the waiter to notice the expiry and take the lock. */
const MARGIN = 500;

describe('fault: the holder process SIGKILLed (its own redis-server)', () => {
  watchUnhandledRejections();
  let redis: TestRedis;
  let node: LockNode;

  beforeAll(async () => {
    redis = await startRedis({ control: true });
    node = await lockNode(fastRedis(redis.port), { fencing: true });
  });
  afterAll(async () => {
    await killChildren();
    await node?.close();
    await redis?.stop();
  });

  /** Starts a child that holds `key`; resolves with its fencing token once it holds it. */
  async function holderProcess(key: string, explicit: boolean) {
    const child = ChildLines.tsNode(join(__dirname, 'holder-child.ts'), [
      redis.url,
      node.prefix,
      key,
      String(LEASE),
      ...(explicit ? ['explicit'] : []),
    ]);
    const [, token] = await child.line(/^held (\d+)$/);
    return { child, token: Number(token) };
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
      child.kill();
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
