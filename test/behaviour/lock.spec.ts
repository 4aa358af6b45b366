import type { Redis } from 'ioredis';
import {
  LockAcquireTimeoutError,
  LockError,
  LockLostError,
  LockNotHeldError,
  type LockHandle,
  type LockService,
} from '../../lib';
import { lockApp, lockAppEach } from '../support/lock-app';
import { STORE_KINDS, suiteStore } from '../support/suite-store';
import { sleep, until } from '../../tools/time';

// The library's behavioural suite, run on real Redis and on the in-memory store: both must
// behave alike. What only Redis has (its layout, Redisson interop, its clients) is tested in
// lock-service.redis.spec.ts.
describe.each(STORE_KINDS)('LockService on the %s store', (kind) => {
  let locks: LockService;
  let prefix: string;

  const store = suiteStore(kind);
  // No client registry: its refresh would fall between a test's command counts.
  lockAppEach(
    store,
    { leaseTime: 600, waitTime: 5_000, clientRegistry: false },
    (made) => ({ locks, prefix } = made),
  );

  /** GET-then-SET with a pause in between: loses updates unless excluded. */
  async function unsafeIncrement(counter: string) {
    const value = await store.getCounter(counter);
    await sleep(1);
    await store.setCounter(counter, value + 1);
  }

  it('excludes concurrent callers: no lost update on a GET-then-SET counter', async () => {
    const counter = `${prefix}counter-value`;
    await Promise.all(
      Array.from({ length: 40 }, () => locks.run('counter', () => unsafeIncrement(counter))),
    );
    expect(await store.getCounter(counter)).toBe(40);
  });

  it('the same counter without the lock does lose updates (the check above can fail)', async () => {
    const counter = `${prefix}unlocked`;
    await Promise.all(Array.from({ length: 40 }, () => unsafeIncrement(counter)));
    expect(await store.getCounter(counter)).toBeLessThan(40);
  });

  it('excludes across two applications (two LockService instances) on one store', async () => {
    const other = await lockApp(store.target, { keyPrefix: prefix, leaseTime: 600 });
    try {
      const counter = `${prefix}two-apps`;
      await Promise.all(
        Array.from({ length: 30 }, (_, i) =>
          (i % 2 ? locks : other.locks).run('shared', () => unsafeIncrement(counter)),
        ),
      );
      expect(await store.getCounter(counter)).toBe(30);
    } finally {
      await other.app.close();
    }
  });

  it('runs different keys in parallel', async () => {
    let inside = 0;
    let maxInside = 0;
    // A lease of their own: the suite's 600 ms one can run out in a loaded run's stall.
    await Promise.all(
      Array.from({ length: 5 }, (_, i) =>
        locks.run(
          `parallel:${i}`,
          async () => {
            maxInside = Math.max(maxInside, ++inside);
            await sleep(100);
            inside--;
          },
          { leaseTime: 30_000 },
        ),
      ),
    );
    expect(maxInside).toBe(5);
  });

  it('re-enters across awaits without a store command, with holdCount following the depth', async () => {
    // An explicit lease on the outer hold: no renewal falls between the two command counts.
    await locks.run(
      'nest',
      async (outer) => {
        await sleep(5);
        const before = await store.commandCount();
        const depths = await locks.run('nest', async (inner) => {
          await sleep(1);
          const deeper = await locks.run('nest', () => locks.holdCount('nest'));
          return [inner.depth, locks.holdCount('nest'), deeper];
        });
        const after = await store.commandCount();
        expect(after - before).toBe(0);
        expect(depths).toEqual([2, 2, 3]);
        expect(outer.depth).toBe(1);
        expect(locks.holdCount('nest')).toBe(1);
        expect(locks.isHeldByCurrentContext('nest')).toBe(true);
      },
      { leaseTime: 30_000 },
    );
    expect(locks.holdCount('nest')).toBe(0);
    expect(locks.isHeldByCurrentContext('nest')).toBe(false);
    expect(await locks.isLocked('nest')).toBe(false);
  });

  it('re-enters an outer lock from inside an inner one of another key, also after awaits', async () => {
    const inner = await locks.run('outer', () =>
      locks.run('inner', async () => {
        await sleep(1);
        const depth = await locks.run('outer', () => locks.holdCount('outer'), { waitTime: 0 });
        return [locks.holdCount('outer'), locks.holdCount('inner'), depth];
      }),
    );
    expect(inner).toEqual([1, 1, 2]);
    expect(await locks.isLocked('outer')).toBe(false);
  });

  it('serialises concurrent siblings inside one locked call', async () => {
    const events: string[] = [];
    await locks.run('siblings', async () => {
      await Promise.all(
        [1, 2].map((n) =>
          locks.run('siblings', async () => {
            events.push(`start ${n}`);
            await sleep(50);
            events.push(`end ${n}`);
          }),
        ),
      );
    });
    expect(events).toEqual(['start 1', 'end 1', 'start 2', 'end 2']);
  });

  it('does not let another call chain in the same process re-enter', async () => {
    const order: string[] = [];
    const first = locks.run('chains', async () => {
      order.push('first in');
      await sleep(100);
      order.push('first out');
    });
    await sleep(20);
    const second = locks.run('chains', () => order.push('second in'));
    await Promise.all([first, second]);
    expect(order).toEqual(['first in', 'first out', 'second in']);
  });

  it('keeps a lock alive past its lease with the watchdog', async () => {
    // Its own 1.5 s lease: a loaded run's event-loop stall can outlast the suite's 600 ms.
    const own = await lockApp(store.target, { keyPrefix: prefix, leaseTime: 1_500 });
    try {
      const lock = await own.locks.acquire('watchdog');
      await sleep(3_200); // two leases: only renewals keep it
      expect(lock.signal.reason).toBeUndefined();
      expect(await store.pttl(`${prefix}watchdog`)).toBeGreaterThan(0);
      await lock.release();
      expect(await store.exists(`${prefix}watchdog`)).toBe(false);
    } finally {
      await own.app.close();
    }
  });

  it('lets an explicit lease expire: signal aborted, release reports LockLostError', async () => {
    const lock = await locks.acquire('lease', { leaseTime: 200 });
    expect(await store.pttl(`${prefix}lease`)).toBeLessThanOrEqual(200);
    await sleep(400);
    expect(await store.exists(`${prefix}lease`)).toBe(false);
    expect(lock.signal.aborted).toBe(true);
    expect(lock.signal.reason).toBeInstanceOf(LockLostError);
    await expect(lock.release()).rejects.toBeInstanceOf(LockLostError);
  });

  it('releases in finally when the function throws, and rethrows its error unchanged', async () => {
    const failure = new TypeError('boom');
    await expect(
      locks.run('throws', () => {
        throw failure;
      }),
    ).rejects.toBe(failure);
    expect(await locks.isLocked('throws')).toBe(false);
  });

  it('never lets a former owner release a lock someone else now holds', async () => {
    const a = await locks.acquire('owner');
    expect(await locks.forceUnlock('owner')).toBe(true);
    const other = await lockApp(store.target, { keyPrefix: prefix });
    try {
      const b = await other.locks.acquire('owner');
      await expect(a.release()).rejects.toBeInstanceOf(LockLostError);
      if (store.raw) {
        expect(await store.raw.hkeys(`${prefix}owner`)).toEqual([expect.stringMatching(/:\d+$/)]);
      }
      expect(await other.locks.isLocked('owner')).toBe(true);
      await b.release();
    } finally {
      await other.app.close();
    }
  });

  it('forceUnlock deletes a held lock, tells its holder and wakes a waiter', async () => {
    const held = await locks.acquire('force');
    const waiter = locks.acquire('force', { waitTime: 5_000 });
    await sleep(50);
    expect(await locks.forceUnlock('force')).toBe(true);
    expect(held.signal.aborted).toBe(true);
    const next = await waiter;
    expect(locks.current('force')).toBeUndefined();
    await next.release();
    expect(await locks.forceUnlock('force')).toBe(false);
  });

  it('wakes a waiter by the release message, long before the holder TTL', async () => {
    const longLease = await lockApp(store.target, { keyPrefix: prefix, leaseTime: 30_000 });
    try {
      const held = await longLease.locks.acquire('wake');
      let releasedAt = 0;
      setTimeout(() => {
        releasedAt = Date.now();
        void held.release();
      }, 200);
      const next = await locks.acquire('wake', { waitTime: 10_000 });
      const wokeAfter = Date.now() - releasedAt;
      expect(wokeAfter).toBeLessThan(1_000); // the TTL was ~30 000 ms
      await next.release();
    } finally {
      await longLease.app.close();
    }
  });

  it('fails fast with waitTime 0', async () => {
    const held = await locks.acquire('busy');
    const other = await lockApp(store.target, { keyPrefix: prefix });
    try {
      const started = Date.now();
      await expect(other.locks.acquire('busy', { waitTime: 0 })).rejects.toBeInstanceOf(
        LockAcquireTimeoutError,
      );
      expect(await other.locks.tryAcquire('busy')).toBeNull();
      expect(Date.now() - started).toBeLessThan(500);
      const timeout = await other.locks.acquire('busy', { waitTime: 100 }).catch((e: unknown) => e);
      expect(timeout).toBeInstanceOf(LockAcquireTimeoutError);
      expect((timeout as Error).message).toContain('"busy" within 100 ms');
    } finally {
      await held.release();
      await other.app.close();
    }
  });

  it('cancels a wait with an AbortSignal and leaves no lock behind', async () => {
    const held = await locks.acquire('abort');
    const controller = new AbortController();
    const reason = new Error('client went away');
    const waiting = locks.acquire('abort', { waitTime: 10_000, signal: controller.signal });
    setTimeout(() => controller.abort(reason), 50);
    await expect(waiting).rejects.toBe(reason);
    await held.release();
    await sleep(100);
    expect(await locks.isLocked('abort')).toBe(false);
    // An already aborted signal rejects before any Redis call.
    await expect(locks.acquire('abort', { signal: AbortSignal.abort(reason) })).rejects.toBe(
      reason,
    );
  });

  it('releases a lock acquired after its caller gave up', async () => {
    for (let i = 0; i < 20; i++) {
      const held = await locks.acquire('abandon');
      const controller = new AbortController();
      const waiting = locks.acquire('abandon', { signal: controller.signal }).then(
        (lock) => lock.release(),
        () => undefined,
      );
      // Release and abort in the same tick: the waiter's attempt may succeed after it gave up.
      await held.release();
      controller.abort();
      await waiting;
    }
    await until(async () => !(await store.exists(`${prefix}abandon`)), 2_000);
  });

  it('reports a lock lost during work: signal aborted, run() rejects, policies apply', async () => {
    const lost: LockLostError[] = [];
    const subscription = locks.lockLost$.subscribe((error) => lost.push(error));
    const deleteWhileHeld = async (lock: LockHandle) => {
      await store.deleteLock(`${prefix}lost`);
      await until(() => lock.signal.aborted, 1_000); // within one 600 ms lease
      return 'done';
    };
    await expect(locks.run('lost', deleteWhileHeld)).rejects.toBeInstanceOf(LockLostError);
    await expect(locks.run('lost', deleteWhileHeld, { onLockLost: 'ignore' })).resolves.toBe(
      'done',
    );
    const seen: LockLostError[] = [];
    await expect(
      locks.run('lost', deleteWhileHeld, { onLockLost: (error) => seen.push(error) }),
    ).resolves.toBe('done');
    expect(seen).toHaveLength(1);
    expect(lost).toHaveLength(3);
    expect(lost[0].key).toBe('lost');
    subscription.unsubscribe();
  });

  it('hands out growing fencing tokens when asked, shared by nested holds', async () => {
    const fencing = { fencing: true };
    const first = await locks.run('fence', (lock) => lock.fencingToken!, fencing);
    const [second, nested] = await locks.run(
      'fence',
      async (lock) => [lock.fencingToken!, await locks.run('fence', (inner) => inner.fencingToken)],
      fencing,
    );
    expect(second).toBeGreaterThan(first);
    expect(nested).toBe(second);
    expect(await locks.run('fence', (lock) => lock.fencingToken)).toBeUndefined();
  });

  it('supports await using, current() and rejects a second release', async () => {
    let handle: LockHandle | undefined;
    {
      await using lock = await locks.acquire('using');
      handle = lock;
      expect(await locks.isLocked('using')).toBe(true);
      expect(locks.current()).toBeUndefined(); // acquire() does not change the caller's context
      await locks.runAs(lock, async () => {
        expect(locks.current()).toBe(lock);
        expect(locks.current('using')).toBe(lock);
        await locks.run('using', () => expect(locks.holdCount('using')).toBe(2));
      });
    }
    expect(await locks.isLocked('using')).toBe(false);
    await expect(handle.release()).rejects.toBeInstanceOf(LockNotHeldError);
  });

  it('reports remainingTtl and isLocked', async () => {
    expect(await locks.remainingTtl('ttl')).toBeNull();
    expect(await locks.isLocked('ttl')).toBe(false);
    const lock = await locks.acquire('ttl', { leaseTime: 5_000 });
    const ttl = await locks.remainingTtl('ttl');
    expect(ttl).toBeGreaterThan(4_000);
    expect(ttl).toBeLessThanOrEqual(5_000);
    await lock.release();
  });

  it('rejects new acquires and waiters on shutdown, releases held locks, closes its connections', async () => {
    const other = await lockApp(store.target, { keyPrefix: prefix, shutdownTimeout: 200 });
    const blocker = await locks.acquire('shutdown-wait');
    const held = await other.locks.acquire('shutdown');
    const waiter = other.locks.acquire('shutdown-wait', { waitTime: 10_000 });
    await sleep(50);
    const clientsBefore = store.raw && (await connectedClients(store.raw));
    // Handled from the start: close() rejects it before it is awaited below.
    const waiterRejected = expect(waiter).rejects.toBeInstanceOf(LockError);
    await other.app.close();
    await waiterRejected;
    await expect(other.locks.acquire('x')).rejects.toThrow(/shutting down/);
    expect(await store.exists(`${prefix}shutdown`)).toBe(false);
    // Still held by work in progress when the grace period ended: it was released, so the
    // holder is told (issue 8, defect 1).
    expect(held.signal.aborted).toBe(true);
    expect(held.signal.reason).toBeInstanceOf(LockLostError);
    // Its command and pub/sub connections; a node-redis client passed as `client` is the
    // user's: only the module's duplicate of it for pub/sub is closed.
    const closed = kind === 'node-redis' ? 1 : 2;
    if (store.raw) expect(await connectedClients(store.raw)).toBe(clientsBefore! - closed);
    await blocker.release();
  });

  it('an abort while the first attempt is in flight ends the wait: the caller never gets the lock', async () => {
    const held = await locks.acquire('abort-early');
    const controller = new AbortController();
    const waiting = locks.acquire('abort-early', {
      waitTime: Infinity,
      signal: controller.signal,
    });
    controller.abort(new Error('caller gave up')); // before the busy answer arrives
    await expect(waiting).rejects.toThrow('caller gave up');
    await held.release();
    await sleep(100);
    expect(await locks.isLocked('abort-early')).toBe(false);
  });

  async function connectedClients(raw: Redis): Promise<number> {
    const info = await raw.info('clients');
    return Number(/connected_clients:(\d+)/.exec(info)![1]);
  }
});
