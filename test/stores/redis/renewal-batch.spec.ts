import type { LockHandle } from '../../../lib';
import { lockApp } from '../../support/lock-app';
import { monitorServer } from '../../support/redis-monitor';
import { suiteStore } from '../../support/suite-store';
import { sleep } from '../../../tools/time';

/**
 * The renewal calls' entry kinds (`l`, `w`, `r` per entry: renew-all.lua's ARGV[2]) seen on
 * MONITOR while `record(ms)` runs.
 */
async function renewalMonitor(raw: NonNullable<ReturnType<typeof suiteStore>['raw']>) {
  let calls: string[] | undefined;
  const monitor = await monitorServer(raw, ({ args }) => {
    if (calls === undefined || args[0].toLowerCase() !== 'evalsha') return;
    const kinds = args[3 + Number(args[2]) + 1];
    if (kinds !== undefined && /^[lwr]+$/.test(kinds)) calls.push(kinds);
  });
  return {
    record: async (ms: number): Promise<string[]> => {
      const seen: string[] = (calls = []);
      await sleep(ms);
      calls = undefined;
      return seen;
    },
    close: () => monitor.close(),
  };
}

// The watchdog on one Redis node: holds of every kind share batched renewal calls.
describe('renewal of mixed kinds on one Redis node', () => {
  const store = suiteStore('redis');

  it('renews plain, read, write, fair and multi holds together, at most 100 per call', async () => {
    // A 1.5 s lease: with two busy loops on 2 cores and MONITOR echoing every command, a 600 ms
    // lease was shorter than a stalled renewal round and a hold expired (seen in a loaded run).
    const { app, locks } = await lockApp(store.target, { leaseTime: 1_500 });
    const monitor = await renewalMonitor(store.raw!);
    const held: LockHandle[] = [];
    try {
      for (let i = 0; i < 40; i++) {
        held.push(await locks.acquire(`plain:${i}`));
        held.push(await locks.acquire(`rw:r${i}`, { mode: 'read' }));
        held.push(await locks.acquire(`rw:w${i}`, { mode: 'write' }));
        held.push(await locks.acquire(`fair:${i}`, { fair: true }));
        held.push(await locks.acquire([`m:${i}:a`, `m:${i}:b`]));
      }
      // 200 holds, 240 entries (a group renews each member); a renewal every 500 ms.
      const calls = await monitor.record(1_500);
      const entries = calls.reduce((sum, kinds) => sum + kinds.length, 0);
      expect(entries).toBeGreaterThanOrEqual(240); // every hold renewed at least once
      expect(Math.max(...calls.map((kinds) => kinds.length))).toBeLessThanOrEqual(100);
      expect(calls.some((kinds) => ['l', 'r', 'w'].every((kind) => kinds.includes(kind)))).toBe(
        true,
      );
      // Batched: about ceil(240 / 100) calls per renewal period, never one per hold.
      expect(calls.length).toBeLessThan(entries / 20);
      expect(held.every((lock) => !lock.signal.aborted)).toBe(true);
    } finally {
      monitor.close();
      // allSettled: a hold lost under load must not keep the app (and jest) from closing.
      await Promise.allSettled(held.map((lock) => lock.release()));
      await app.close();
    }
  });
});
