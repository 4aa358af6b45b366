import type { Redis } from 'ioredis';
import { LockScripts } from '../../lib/stores/redis/lock-scripts';
import { LEASE, type LockNode, twoLockNodes } from './fault-kit';
import { sleep } from '../../tools/time';

describe('fault: SCRIPT FLUSH mid-run (its own redis-server)', () => {
  let raw: Redis;
  let a: LockNode;
  let b: LockNode;

  twoLockNodes({}, (nodes) => ({ raw, a, b } = nodes));

  /** How many times SCRIPT LOAD ran since the last CONFIG RESETSTAT. */
  async function scriptLoads(): Promise<number> {
    const stats = await raw.info('commandstats');
    return Number(/cmdstat_script\|load:calls=(\d+)/.exec(stats)?.[1] ?? 0);
  }

  it('release, acquire, forceUnlock and inspection after a flush: NOSCRIPT is handled transparently', async () => {
    for (let i = 0; i < 3; i++) {
      await a.locks.run('flush', async (lock) => {
        await raw.script('FLUSH'); // the release below meets NOSCRIPT
        expect(lock.signal.aborted).toBe(false);
      });
      expect(await raw.exists(`${a.prefix}flush`)).toBe(0);
      await raw.script('FLUSH'); // the next acquire meets NOSCRIPT
    }
    await a.locks.acquire('flush:forced');
    await raw.script('FLUSH');
    expect(await a.locks.forceUnlock('flush:forced')).toBe(true);
    expect(await a.locks.isLocked('flush:forced')).toBe(false);
  });

  it('the watchdog renews through repeated flushes: a lock held for several leases is not lost', async () => {
    const held = await a.locks.acquire('flush:renew');
    const until = Date.now() + LEASE * 3;
    while (Date.now() < until) {
      await raw.script('FLUSH');
      await sleep(50);
    }
    expect(held.signal.aborted).toBe(false);
    expect(await raw.pttl(`${a.prefix}flush:renew`)).toBeGreaterThan(0);
    await held.release();
    expect(a.lost.filter((e) => e.key === 'flush:renew')).toEqual([]);
  });

  it('waiters woken after a flush still get the lock, one after the other', async () => {
    const held = await a.locks.acquire('flush:wait');
    const order: number[] = [];
    const waiters = [1, 2, 3].map((n) =>
      b.locks.run('flush:wait', () => void order.push(n), { waitTime: 5_000 }),
    );
    await sleep(50);
    await raw.script('FLUSH');
    await held.release();
    await Promise.all(waiters);
    expect(order).toEqual([1, 2, 3]);
  });

  it('many calls meeting NOSCRIPT at once load the script once per client', async () => {
    await raw.script('FLUSH');
    // The watchdog may renew the held locks meanwhile: keep its script loaded, so the count is
    // the acquire's and the release's loads alone.
    await raw.script('LOAD', LockScripts.renew.source);
    await raw.config('RESETSTAT');
    const handles = await Promise.all(
      Array.from({ length: 20 }, (_, i) => a.locks.acquire(`flush:many:${i}`)),
    );
    expect(await scriptLoads()).toBe(1);
    await Promise.all(handles.map((handle) => handle.release()));
    expect(await scriptLoads()).toBe(2); // the release script, once
  });
});
