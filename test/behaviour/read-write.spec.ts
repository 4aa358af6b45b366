import { Injectable } from '@nestjs/common';
import {
  LockAcquireTimeoutError,
  LockExceptionFilter,
  LockKeyError,
  LockLostError,
  LockOptionsError,
  LockRedisError,
  LockUpgradeError,
  Locked,
  LockService,
  type LockHandle,
} from '../../lib';
import { lockApp, storeAppEach } from '../support/lock-app';
import type { TestRedis } from '../support/redis-server';
import { STORE_KINDS } from '../support/suite-store';
import { aborted, CHILDREN_TIMEOUT } from './family-kit';
import { killChildren, startChild } from './rw-fair-kit';
import { sleep, until } from '../../tools/time';

// Children take long to start on a busy machine (see CHILDREN_TIMEOUT).
jest.setTimeout(CHILDREN_TIMEOUT);

/** A service whose methods take the read-write lock `account:<id>` by decorator. */
@Injectable()
class Accounts {
  inside = 0;
  most = 0;
  constructor(readonly locks: LockService) {}

  @Locked('account:<0>', { mode: 'read' })
  async balance(id: number): Promise<string | undefined> {
    this.most = Math.max(this.most, ++this.inside);
    await sleep(20);
    this.inside--;
    return this.locks.current(`account:${id}`, { mode: 'read' })?.mode;
  }

  @Locked('account:<0>', { mode: 'write' })
  async pay(id: number): Promise<string | undefined> {
    this.most = Math.max(this.most, ++this.inside);
    await sleep(20);
    this.inside--;
    await this.balance(id); // a downgrade, not a deadlock
    return this.locks.current(`account:${id}`, { mode: 'write' })?.mode;
  }
}

// Read-write locks through LockService, on real Redis and on the memory store alike.
describe.each(STORE_KINDS)('read-write locks on the %s store', (kind) => {
  const suite = storeAppEach(kind, { leaseTime: 600, waitTime: 5_000 });

  it('@Locked with mode: reads overlap, a write excludes them and may read inside', async () => {
    const { prefix, store } = suite;
    const other = await lockApp(store.target, { keyPrefix: prefix }, { providers: [Accounts] });
    try {
      const accounts = other.app.get(Accounts);
      expect(await Promise.all([1, 2, 3].map(() => accounts.balance(7)))).toEqual([
        'read',
        'read',
        'read',
      ]);
      expect(accounts.most).toBe(3);
      accounts.most = 0;
      const results = await Promise.all([accounts.pay(7), accounts.balance(7), accounts.pay(7)]);
      expect(results).toEqual(['write', 'read', 'write']);
      expect(accounts.most).toBe(1);
    } finally {
      await other.app.close();
    }
  });

  it('lets many readers in at once (overlap observed)', async () => {
    const { locks } = suite;
    let inside = 0;
    let most = 0;
    const entered: (() => void)[] = [];
    const all = new Promise<void>((resolve) => {
      let count = 0;
      entered.push(() => ++count === 5 && resolve());
    });
    await Promise.all(
      Array.from({ length: 5 }, () =>
        locks.run(
          'rw',
          async (lock) => {
            expect(lock.mode).toBe('read');
            expect(lock.fair).toBe(false);
            most = Math.max(most, ++inside);
            entered[0]();
            await all; // every reader is inside before any leaves
            inside--;
          },
          { mode: 'read' },
        ),
      ),
    );
    expect(most).toBe(5);
  });

  it('a writer excludes readers and writers: no lost update, no snapshot changes mid-read', async () => {
    const { locks, prefix, store } = suite;
    const counter = `${prefix}rw-counter`;
    let torn = 0;
    const write = () =>
      locks.run(
        'rw',
        async (lock) => {
          expect(lock.mode).toBe('write');
          const value = await store.getCounter(counter);
          await sleep(1);
          await store.setCounter(counter, value + 1);
        },
        { mode: 'write' },
      );
    const read = () =>
      locks.run(
        'rw',
        async () => {
          const before = await store.getCounter(counter);
          await sleep(2);
          if ((await store.getCounter(counter)) !== before) torn++;
        },
        { mode: 'read' },
      );
    await Promise.all(Array.from({ length: 40 }, (_, i) => (i % 2 ? write() : read())));
    expect(await store.getCounter(counter)).toBe(20);
    expect(torn).toBe(0);
  });

  it('downgrade: a writer takes the read lock and keeps both', async () => {
    const { locks } = suite;
    await locks.run(
      'rw',
      async () => {
        await locks.run(
          'rw',
          async (read) => {
            expect(read.mode).toBe('read');
            expect(locks.holdCount('rw', { mode: 'write' })).toBe(1);
            expect(locks.holdCount('rw', { mode: 'read' })).toBe(1);
            expect(await locks.isLocked('rw', { mode: 'write' })).toBe(true);
          },
          { mode: 'read' },
        );
        expect(locks.holdCount('rw', { mode: 'read' })).toBe(0);
        expect(await locks.isLocked('rw', { mode: 'write' })).toBe(true);
        // A reader of another chain still waits for the writer.
        expect(
          await locks.detach(() => locks.tryAcquire('rw', { mode: 'read', waitTime: 0 })),
        ).toBeNull();
      },
      { mode: 'write' },
    );
    expect(await locks.isLocked('rw', { mode: 'write' })).toBe(false);
    expect(await locks.isLocked('rw', { mode: 'read' })).toBe(false);
  });

  it('upgrade: a reader asking for the write lock gets LockUpgradeError at once, nothing changed', async () => {
    const { locks } = suite;
    await locks.run(
      'rw',
      async (read) => {
        await expect(locks.acquire('rw', { mode: 'write', waitTime: 60_000 })).rejects.toThrow(
          LockUpgradeError,
        );
        await expect(locks.tryAcquire('rw', { mode: 'write' })).rejects.toThrow(LockUpgradeError);
        expect(locks.holdCount('rw', { mode: 'read' })).toBe(1);
        expect(locks.holdCount('rw', { mode: 'write' })).toBe(0);
        expect(read.signal.aborted).toBe(false);
        expect(await locks.isLocked('rw', { mode: 'read' })).toBe(true);
        expect(await locks.isLocked('rw', { mode: 'write' })).toBe(false);
      },
      { mode: 'read' },
    );
    expect(await locks.isLocked('rw')).toBe(false);
  });

  it('re-enters per mode across awaits, and serialises siblings of one chain per mode', async () => {
    const { locks } = suite;
    for (const mode of ['read', 'write'] as const) {
      await locks.run(
        'rw',
        async () => {
          await sleep(1);
          const depths = await locks.run(
            'rw',
            (inner) => [inner.depth, locks.holdCount('rw', { mode })],
            {
              mode,
            },
          );
          expect(depths).toEqual([2, 2]);
          let inside = 0;
          let most = 0;
          await Promise.all(
            Array.from({ length: 3 }, () =>
              locks.run(
                'rw',
                async () => {
                  most = Math.max(most, ++inside);
                  await sleep(5);
                  inside--;
                },
                { mode },
              ),
            ),
          );
          expect(most).toBe(1);
        },
        { mode },
      );
      expect(await locks.isLocked('rw')).toBe(false);
    }
  });

  it('a writer waiting behind readers wakes when the last reader leaves', async () => {
    const { locks } = suite;
    const one = await locks.acquire('rw', { mode: 'read', leaseTime: 60_000 });
    const two = await locks.detach(() => locks.acquire('rw', { mode: 'read', leaseTime: 60_000 }));
    let written = false;
    const writer = locks.detach(() =>
      locks.run('rw', () => void (written = true), { mode: 'write', waitTime: 10_000 }),
    );
    await one.release();
    await sleep(20);
    expect(written).toBe(false);
    await two.release(); // the leases last a minute: only the release notice can wake the writer
    await writer;
    expect(written).toBe(true);
  });

  it('a local writer that waits is not starved by readers that come after it', async () => {
    const { locks } = suite;
    const order: string[] = [];
    const first = await locks.acquire('rw', { mode: 'read' });
    const writer = locks.detach(() =>
      locks.run('rw', () => void order.push('writer'), { mode: 'write' }),
    );
    await sleep(20); // the writer is queued
    const late = locks.detach(() =>
      locks.run('rw', () => void order.push('late reader'), { mode: 'read' }),
    );
    await sleep(20);
    expect(order).toEqual([]);
    await first.release();
    await Promise.all([writer, late]);
    expect(order).toEqual(['writer', 'late reader']);
  });

  it('forceUnlock frees readers and the writer; their signals abort with LockLostError', async () => {
    const { locks } = suite;
    const readers = await Promise.all(
      [1, 2].map(() => locks.detach(() => locks.acquire('rw', { mode: 'read' }))),
    );
    expect(await locks.forceUnlock('rw')).toBe(true);
    for (const reader of readers)
      expect(await aborted(reader.signal)).toBeInstanceOf(LockLostError);
    expect(await locks.isLocked('rw', { mode: 'read' })).toBe(false);
    // A freed reader's late release frees nothing of a new reader's, and says the hold was lost.
    const fresh = await locks.detach(() => locks.acquire('rw', { mode: 'read' }));
    await expect(readers[0].release()).rejects.toThrow(LockLostError);
    expect(await locks.isLocked('rw', { mode: 'read' })).toBe(true);
    expect(await locks.tryAcquire('rw', { mode: 'write', waitTime: 0 })).toBeNull();
    await fresh.release();

    const writer = await locks.acquire('rw', { mode: 'write' });
    expect(await locks.forceUnlock('rw')).toBe(true);
    expect(await aborted(writer.signal)).toBeInstanceOf(LockLostError);
    expect(await locks.isLocked('rw', { mode: 'write' })).toBe(false);
    expect(await locks.forceUnlock('rw')).toBe(false);
  });

  it.each([
    [{ fair: true, mode: 'read' }],
    [{ fencing: true, mode: 'write' }],
    [{ mode: 'upgrade' }],
  ])('refuses %j with LockOptionsError', async (options) => {
    const { locks } = suite;
    await expect(locks.acquire('rw', options as never)).rejects.toThrow(LockOptionsError);
    await expect(locks.tryAcquire('rw', options as never)).rejects.toThrow(LockOptionsError);
    await expect(locks.run('rw', () => 1, options as never)).rejects.toThrow(LockOptionsError);
    expect(await locks.isLocked('rw')).toBe(false);
  });
});

describe('read-write locks on Redis across processes', () => {
  // The live holders' lease: 1.5 s, kept by renewals. A 600 ms one was lost to an event-loop stall
  // in a loaded run (two busy loops beside two Jest workers). Killed children keep 600 ms.
  const suite = storeAppEach('redis', { leaseTime: 1_500, waitTime: 5_000 });
  afterEach(killChildren);
  const leaseKeys = () => suite.store.raw!.keys(`{${suite.prefix}rw}:*rwlock_timeout*`);

  it('readers in three processes hold at once; a writer in another waits and wakes on the last release', async () => {
    const { locks, prefix, store } = suite;
    const children = await Promise.all(
      [1, 2, 3].map(() => startChild((store.target as TestRedis).url, prefix)),
    );
    children.forEach((child, i) => child.send(`acquire r${i} rw read 10000`));
    await Promise.all(children.map((child, i) => child.line(new RegExp(`^held r${i}$`))));
    expect(await leaseKeys()).toHaveLength(3); // all three hold at once
    const writer = locks.acquire('rw', { mode: 'write', waitTime: 10_000 });
    let wrote = false;
    void writer.then(() => (wrote = true));
    for (const [i, child] of children.entries()) {
      await sleep(20);
      expect(wrote).toBe(false);
      child.send(`release r${i}`);
      await child.line(new RegExp(`^released r${i}$`));
    }
    const lock = await writer; // leases of 30 s: woken by the last release's notice
    expect(lock.mode).toBe('write');
    children[0].send('acquire late rw read 0');
    await children[0].line(/^busy late$/);
    await lock.release();
  });

  it('a SIGKILLed reader expires while a live reader keeps its hold (renewed by the watchdog)', async () => {
    const { locks, prefix, store } = suite;
    const child = await startChild((store.target as TestRedis).url, prefix, { leaseTime: 600 });
    child.send('acquire dead rw read 5000');
    await child.line(/^held dead$/);
    const live = await locks.acquire('rw', { mode: 'read' });
    expect(await leaseKeys()).toHaveLength(2);
    child.process.kill('SIGKILL');
    await until(async () => (await leaseKeys()).length === 1);
    await sleep(1_600); // past a lease: the live one was renewed
    expect(live.signal.reason).toBeUndefined();
    expect(await leaseKeys()).toHaveLength(1);
    const other = await lockApp(store.target, { keyPrefix: prefix, leaseTime: 600 });
    try {
      expect(await other.locks.tryAcquire('rw', { mode: 'write', waitTime: 0 })).toBeNull();
      const writer = other.locks.acquire('rw', { mode: 'write', waitTime: 5_000 });
      await live.release();
      await (await writer).release();
    } finally {
      await other.app.close();
    }
  });

  it('a downgraded writer that releases the write first keeps its read hold, renewed', async () => {
    const { locks, prefix, store } = suite;
    const write = await locks.acquire('rw', { mode: 'write' });
    const read = await locks.runAs(write, () => locks.acquire('rw', { mode: 'read' }));
    await write.release();
    expect(await store.raw!.hget(`${prefix}rw`, 'mode')).toBe('read');
    await sleep(1_600); // past a lease: the watchdog renewed the read hold
    expect(read.signal.reason).toBeUndefined();
    expect(await leaseKeys()).toHaveLength(1);
    expect(
      await locks.detach(() => locks.tryAcquire('rw', { mode: 'write', waitTime: 0 })),
    ).toBeNull();
    await read.release();
    expect(await store.raw!.exists(`${prefix}rw`)).toBe(0);
  });

  it('a lost read or write hold aborts its signal with LockLostError', async () => {
    const { locks, prefix, store } = suite;
    for (const mode of ['read', 'write'] as const) {
      const lock: LockHandle = await locks.acquire('rw', { mode });
      await store.raw!.del(`${prefix}rw`);
      expect(await aborted(lock.signal)).toBeInstanceOf(LockLostError);
      await expect(lock.release()).rejects.toThrow(LockLostError);
    }
  });
});

describe('HTTP answer to LockUpgradeError', () => {
  it('is not caught by LockExceptionFilter (no 409): Nest answers 500, a programming error', () => {
    const caught: unknown[] = Reflect.getMetadata('__filterCatchExceptions__', LockExceptionFilter);
    expect(caught).toEqual([LockAcquireTimeoutError, LockKeyError, LockRedisError]);
    for (const mapped of caught) {
      expect(new LockUpgradeError('k')).not.toBeInstanceOf(mapped as typeof LockKeyError);
    }
  });
});

// A write hold with an explicit lease under which its chain also reads (a downgrade): the write
// ends at its lease in the store too, while the read hold lives on.
describe.each(STORE_KINDS)('a downgraded write’s own lease (%s store)', (kind) => {
  // The read holds' 30 s lease (and its renewals) must not keep the write alive.
  const suite = storeAppEach(kind, { leaseTime: 30_000, waitTime: 5_000 });

  /** Redis' hash of the lock: its mode and fields (nothing on the memory store). */
  const fields = async (name: string) =>
    (await suite.store.raw?.hgetall(`${suite.prefix}${name}`)) ?? {};

  it('ends at its lease: the lock is then in read mode, other readers come in, the read hold stays', async () => {
    const { locks, prefix, store } = suite;
    const write = await locks.acquire('dg', { mode: 'write', leaseTime: 800 });
    const read = await locks.runAs(write, () => locks.acquire('dg', { mode: 'read' }));
    await until(() => write.signal.aborted, 3_000);
    expect(write.signal.reason).toBeInstanceOf(LockLostError);
    const other = await lockApp(store.target, { keyPrefix: prefix });
    try {
      // Within its 5 s wait, although the lock's lease (the read's) runs 30 s.
      const otherRead = await other.locks.acquire('dg', { mode: 'read' });
      expect(read.signal.aborted).toBe(false);
      expect(await locks.isLocked('dg', { mode: 'write' })).toBe(false);
      expect(await locks.isLocked('dg', { mode: 'read' })).toBe(true);
      if (store.raw) {
        const hash = await fields('dg');
        expect(hash.mode).toBe('read');
        expect(Object.keys(hash).filter((field) => field.endsWith(':write'))).toEqual([]);
      }
      await otherRead.release();
    } finally {
      await other.app.close();
    }
    await read.release();
    expect(await locks.isLocked('dg', { mode: 'read' })).toBe(false);
  });

  it('keeps its own lease when the read hold ends first: a writer elsewhere gets in after it', async () => {
    const { locks, prefix, store } = suite;
    const write = await locks.acquire('dg2', { mode: 'write', leaseTime: 800 });
    const read = await locks.runAs(write, () => locks.acquire('dg2', { mode: 'read' }));
    await read.release();
    const other = await lockApp(store.target, { keyPrefix: prefix });
    try {
      // Within its 5 s wait, although the read hold had raised the lock's lease to 30 s.
      const otherWrite = await other.locks.acquire('dg2', { mode: 'write' });
      expect(write.signal.aborted).toBe(true);
      await otherWrite.release();
    } finally {
      await other.app.close();
    }
  });
});
