import type { LockHandle, PermitHandle } from '../../lib';
import { LEASE, twoLockNodes, type LockNode } from './fault-kit';

/** How long Redis holds the acquire back (CLIENT PAUSE), ms. */
const REDIS_BUSY = 200;
/** How long the event loop is blocked once the request is out: past the lease Redis granted. */
const STALL = REDIS_BUSY + LEASE + 200;

/** Blocks the event loop for `ms` from a timer callback: the stall ends in the timers phase. */
function stallFromTimer(ms: number): void {
  setTimeout(() => {
    const end = performance.now() + ms;
    while (performance.now() < end) {
      // spin: a GC pause, a long synchronous task
    }
  }, 0);
}

type Kind = 'plain' | 'fair' | 'read' | 'write' | 'multi' | 'permit';

/** A's acquire of `key` in `kind` (waiting), and B's try of something it excludes. */
function calls(kind: Kind, a: LockNode, b: LockNode, key: string) {
  const wait = { waitTime: 5_000 };
  switch (kind) {
    case 'plain':
      return [() => a.locks.acquire(key, wait), () => b.locks.tryAcquire(key)] as const;
    case 'fair':
      return [
        () => a.locks.acquire(key, { ...wait, fair: true }),
        () => b.locks.tryAcquire(key, { fair: true }),
      ] as const;
    case 'read':
      return [
        () => a.locks.acquire(key, { ...wait, mode: 'read' }),
        () => b.locks.tryAcquire(key, { mode: 'write' }),
      ] as const;
    case 'write':
      return [
        () => a.locks.acquire(key, { ...wait, mode: 'write' }),
        () => b.locks.tryAcquire(key, { mode: 'read' }),
      ] as const;
    case 'multi':
      return [
        () => a.locks.acquire([`${key}:1`, `${key}:2`], wait),
        () => b.locks.tryAcquire(`${key}:2`),
      ] as const;
    case 'permit':
      return [
        () => a.locks.semaphore(key, { permits: 1 }).acquire(wait),
        () => b.locks.semaphore(key, { permits: 1 }).tryAcquire(),
      ] as const;
  }
}

describe('a grant whose reply is read after its lease ended (stalled event loop, its own redis-server)', () => {
  const suite = twoLockNodes();

  it.each<Kind>(['plain', 'fair', 'read', 'write', 'multi', 'permit'])(
    '%s: never handed over; the caller gets a fresh grant that excludes others',
    async (kind) => {
      const { raw, a, b } = suite;
      const [acquire, tryOther] = calls(kind, a, b, `stalled:${kind}`);
      // The scripts are loaded first (a NOSCRIPT reply would add a round trip after the stall).
      await (await acquire()).release();
      await (await tryOther())!.release();
      // Redis answers the acquire late, and the loop is blocked past the lease when it does.
      await raw.call('CLIENT', 'PAUSE', String(REDIS_BUSY));
      const acquiring = acquire();
      stallFromTimer(STALL);
      const handle: LockHandle | PermitHandle = await acquiring;
      try {
        expect(handle.signal.aborted).toBe(false);
        const other = await tryOther();
        await other?.release();
        expect(other).toBeNull();
      } finally {
        await handle.release().catch(() => undefined);
      }
    },
  );
});
