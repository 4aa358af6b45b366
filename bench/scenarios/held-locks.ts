/**
 * Scenarios 4 and 5 of bench/run.ts, this library only: reentrant enter + exit inside a held
 * lock, and many locks held at once with the watchdog renewing them.
 */
import type { Redis } from 'ioredis';
import type { LockService } from '../../lib';
import { nestjsRedisLock } from '../lib/adapters';
import { commandStats, totalCommands } from '../lib/redis-info';
import { fmt, nowUs, table } from '../lib/stats';
import { sleep } from '../../tools/time';

/** Scenario 4's result. */
export interface ReentrancyResult {
  opsPerSec: number;
  commandsPerOp: number;
}

/** Scenario 5's result. */
export interface HeldLocksResult {
  held: number;
  stillHeld: number;
  periods: number;
  scriptCallsPerPeriod: number;
  renewCallsInWindow: number;
  locksPerCall: number;
  rssBytesPerLock: number;
  heapBytesPerLock: number;
}

/** Runs a full garbage collection when node has --expose-gc (`npm run bench` does). */
function gc() {
  (globalThis as { gc?: () => void }).gc?.();
}

/** The watchdog's renewal period for a lease, ms: a third of it. */
export const renewalPeriod = (lease: number) => Math.floor(lease / 3);

/** Scenario 4: `n` reentrant enter + exit inside a held lock, and the Redis commands they cost. */
export async function reentrancy(
  locks: LockService,
  admin: Redis,
  n: number,
  progress: (message: string) => void,
): Promise<ReentrancyResult> {
  progress('scenario 4: reentrant enter/exit');
  const noop = () => Promise.resolve();
  return locks.run('bench:reentrant', async () => {
    const commandsBefore = await totalCommands(admin);
    const t = nowUs();
    for (let i = 0; i < n; i++) await locks.run('bench:reentrant', noop);
    const elapsed = (nowUs() - t) / 1e6;
    const commands = (await totalCommands(admin)) - commandsBefore - 1; // minus the INFO call itself
    return { opsPerSec: n / elapsed, commandsPerOp: commands / n };
  });
}

/**
 * Scenario 5: `config.held` locks held with the watchdog on (lease `config.lease` ms); counts
 * the renewal script calls over `config.periods` periods after the first renewal, and the
 * memory each held lock takes.
 */
export async function heldLocks(
  url: string,
  admin: Redis,
  config: { held: number; lease: number; periods: number },
  progress: (message: string) => void,
): Promise<HeldLocksResult> {
  progress(`scenario 5: ${config.held} locks held, lease ${config.lease} ms`);
  const watched = await nestjsRedisLock(url, { leaseTime: config.lease });
  gc();
  const memBefore = process.memoryUsage();
  const handles = [];
  for (let i = 0; i < config.held; i += 500) {
    handles.push(
      ...(await Promise.all(
        Array.from({ length: Math.min(500, config.held - i) }, (_, j) =>
          watched.locks.acquire(`bench:held:${i + j}`),
        ),
      )),
    );
  }
  gc();
  const memAfter = process.memoryUsage();
  const period = renewalPeriod(config.lease);
  await sleep(period); // the first renewal also loads the script
  await admin.config('RESETSTAT');
  await sleep(period * config.periods + period / 2);
  const renewCalls = (await commandStats(admin)).evalsha ?? 0;
  const stillHeld = handles.filter((h) => !h.signal.aborted).length;
  // A lock the watchdog could not keep (a starved machine) shows in stillHeld; its release throws.
  await Promise.all(handles.map((h) => h.release().catch(() => undefined)));
  await watched.run.close();
  return {
    held: config.held,
    stillHeld,
    periods: config.periods,
    scriptCallsPerPeriod: renewCalls / config.periods,
    renewCallsInWindow: renewCalls,
    locksPerCall: config.held / (renewCalls / config.periods),
    rssBytesPerLock: (memAfter.rss - memBefore.rss) / config.held,
    heapBytesPerLock: (memAfter.heapUsed - memBefore.heapUsed) / config.held,
  };
}

/** The scenario 4 table (markdown). */
export function reentrancyTable(result: ReentrancyResult): string {
  return table(
    ['ops/s', 'Redis commands per op'],
    [[fmt(result.opsPerSec), fmt(result.commandsPerOp, 4)]],
  );
}

/** The scenario 5 table (markdown). */
export function heldLocksTable(result: HeldLocksResult): string {
  return table(
    [
      'locks still held',
      'script calls per renewal period',
      'locks per call',
      'RSS bytes per lock',
      'heap bytes per lock',
    ],
    [
      [
        result.stillHeld,
        fmt(result.scriptCallsPerPeriod, 1),
        fmt(result.locksPerCall),
        fmt(result.rssBytesPerLock),
        fmt(result.heapBytesPerLock),
      ],
    ],
  );
}
