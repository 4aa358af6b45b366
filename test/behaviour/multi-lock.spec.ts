import { Injectable } from '@nestjs/common';
import {
  LockAcquireTimeoutError,
  LockKeyError,
  LockLostError,
  LockOptionsError,
  Locked,
  LockService,
} from '../../lib';
import { lockApp, storeAppEach, storeAppPairEach } from '../support/lock-app';
import type { TestRedis } from '../support/redis-server';
import { STORE_KINDS, suiteStore } from '../support/suite-store';
import { killChildren } from '../support/child-processes';
import { CHILDREN_TIMEOUT, runChildren } from './family-kit';
import { sleep, until } from '../../tools/time';

// Children take long to start on a busy machine (see CHILDREN_TIMEOUT).
jest.setTimeout(CHILDREN_TIMEOUT);

@Injectable()
class Accounts {
  constructor(readonly locks: LockService) {}

  @Locked(['account:<0>', 'account:<1>'], { waitTime: 5_000 })
  transfer(from: string, to: string): Promise<string[]> {
    return Promise.resolve(
      [from, to].filter((key) => this.locks.isHeldByCurrentContext(`account:${key}`)),
    );
  }

  @Locked({ keys: (from: string, to: string) => [`account:${from}`, `account:${to}`] })
  byFunction(from: string, to: string): Promise<number> {
    return Promise.resolve(
      this.locks.holdCount(`account:${from}`) + this.locks.holdCount(`account:${to}`),
    );
  }

  @Locked({ keys: (keys: unknown) => keys as string[] })
  async anyKeys(_keys: unknown): Promise<void> {}
}

describe.each(STORE_KINDS)('multi-locks through LockService (%s store)', (kind) => {
  const suite = storeAppPairEach(
    kind,
    { leaseTime: 600, waitTime: 5_000 },
    { providers: [Accounts] },
  );

  it('takes all or nothing: a holder of b blocks [a, b], and a stays free meanwhile', async () => {
    const { locks, prefix, store, other } = suite;
    const b = await other.locks.acquire('b');
    expect(await locks.tryAcquire(['a', 'b'])).toBeNull();
    const waiting = locks.acquire(['a', 'b']);
    await until(() => store.exists(`${prefix}b`));
    expect(await locks.isLocked('a')).toBe(false);
    const a = await other.locks.acquire('a', { waitTime: 0 }); // a is free while [a, b] waits
    await a.release();
    await b.release();
    const group = await waiting;
    expect(group.keys).toEqual(['a', 'b']);
    expect(await other.locks.tryAcquire('a')).toBeNull();
    expect(await other.locks.tryAcquire('b')).toBeNull();
    await group.release();
    expect(await locks.isLocked('a')).toBe(false);
    expect(await locks.isLocked('b')).toBe(false);
  });

  it('re-enters the members the chain holds and takes the others; release leaves the outer hold', async () => {
    const { locks, other } = suite;
    await locks.run('a', async () => {
      const group = await locks.acquire(['a', 'b']);
      expect(group.keys).toEqual(['a', 'b']);
      expect(await other.locks.tryAcquire('b')).toBeNull();
      await group.release();
      expect(locks.holdCount('a')).toBe(1);
      expect(await locks.isLocked('a')).toBe(true);
      expect(await locks.isLocked('b')).toBe(false);
      expect(await other.locks.tryAcquire('a')).toBeNull();
    });
    expect(await locks.isLocked('a')).toBe(false);
  });

  it('lets a group holder re-enter one member, and keeps the member held after it', async () => {
    const { locks, other } = suite;
    await locks.run(['a', 'b'], async () => {
      await locks.run('b', () => expect(locks.holdCount('b')).toBe(2), { waitTime: 0 });
      expect(locks.holdCount('b')).toBe(1);
      expect(await other.locks.tryAcquire('b')).toBeNull();
    });
    expect(await locks.isLocked('b')).toBe(false);
  });

  it('moves a waiting group to the member that refuses it, without stranding waiters', async () => {
    const { locks, other } = suite;
    const [a, b] = [await other.locks.acquire('a'), await other.locks.acquire('b')];
    const group = locks.run(['a', 'b'], () => 'group');
    const plain = locks.run('a', async () => {
      await b.release(); // the group, refused by a meanwhile, now waits for a
      return 'plain';
    });
    await a.release();
    expect(await Promise.all([group, plain])).toEqual(['group', 'plain']);
    expect(await locks.isLocked('a')).toBe(false);
    expect(await locks.isLocked('b')).toBe(false);
  });

  it('runs a chain as the group’s owner with runAs: every member re-enters', async () => {
    const { locks } = suite;
    const group = await locks.acquire(['a', 'b']);
    const depths = await locks.runAs(group, () =>
      locks.run(['b', 'a'], () => [locks.holdCount('a'), locks.holdCount('b')], { waitTime: 0 }),
    );
    expect(depths).toEqual([2, 2]);
    expect(locks.holdCount('a')).toBe(0); // the test's own chain holds nothing
    await group.release();
    expect(await locks.isLocked('a')).toBe(false);
  });

  it('finishes a cycle of overlapping groups mixed with plain waiters, woken by notices only', async () => {
    const { locks, prefix, store } = suite;
    // A long lease: a lost wake-up would wait for it and fail the 3 s wait instead.
    const slow = await lockApp(store.target, { keyPrefix: prefix, leaseTime: 30_000 });
    try {
      let inside = 0;
      let violations = 0;
      const end = Date.now() + 800;
      const worker = async (service: LockService, keys: string[]) => {
        let cycles = 0;
        while (Date.now() < end) {
          await service.run(
            keys,
            async () => {
              if (keys.includes('b') && ++inside !== 1) violations++;
              await new Promise((resolve) => setImmediate(resolve));
              if (keys.includes('b')) inside--;
            },
            { waitTime: 3_000 },
          );
          cycles++;
        }
        return cycles;
      };
      const orders = [['a', 'b'], ['b', 'c'], ['c', 'a'], ['b'], ['c', 'b', 'a']];
      const cycles = await Promise.all(
        orders.flatMap((keys) => [worker(locks, keys), worker(slow.locks, [...keys].reverse())]),
      );
      expect(violations).toBe(0);
      expect(Math.min(...cycles)).toBeGreaterThan(0);
    } finally {
      await slow.app.close();
    }
  }, 15_000);

  it('counts duplicated keys once', async () => {
    const { locks } = suite;
    const group = await locks.acquire(['a', 'b', 'a', 'b']);
    expect(group.keys).toEqual(['a', 'b']);
    await group.release();
    expect(await locks.isLocked('a')).toBe(false);
    expect(await locks.isLocked('b')).toBe(false);
  });

  it('keeps keys that contain a comma and a space apart', async () => {
    const { locks } = suite;
    const group = await locks.acquire(['x, y', 'z']);
    expect(group.keys).toEqual(['x, y', 'z']);
    expect(locks.runAs(group, () => locks.holdCount('z'))).toBe(1);
    await group.release();
    expect(await locks.isLocked('x, y')).toBe(false);
  });

  it('aborts the group’s signal when one member is lost', async () => {
    const { locks, prefix, store } = suite;
    const group = await locks.acquire(['a', 'b']);
    await store.deleteLock(`${prefix}b`);
    await until(() => group.signal.aborted, 3_000);
    expect(group.signal.reason).toBeInstanceOf(LockLostError);
    await expect(group.release()).rejects.toBeInstanceOf(LockLostError);
    expect(await locks.isLocked('a')).toBe(false);
  });

  it('leaves nothing held after a timeout or an abort', async () => {
    const { locks, other } = suite;
    const b = await other.locks.acquire('b');
    await expect(locks.acquire(['a', 'b'], { waitTime: 150 })).rejects.toBeInstanceOf(
      LockAcquireTimeoutError,
    );
    const abort = new AbortController();
    const aborted = locks.acquire(['a', 'b'], { signal: abort.signal });
    abort.abort(new Error('stop'));
    await expect(aborted).rejects.toThrow('stop');
    expect(await locks.isLocked('a')).toBe(false);
    expect(locks.heldCount).toBe(0);
    await b.release();
    expect(await locks.isLocked('b')).toBe(false);
  });

  it('rejects bad key lists with LockKeyError, and mode or fair with a list', async () => {
    const { locks } = suite;
    for (const keys of [[], [1, 'a'], ['a', ''], Array.from({ length: 65 }, (_, i) => `k${i}`)]) {
      await expect(locks.acquire(keys as string[])).rejects.toBeInstanceOf(LockKeyError);
    }
    await expect(locks.acquire(['a', 'b'], { mode: 'write' })).rejects.toBeInstanceOf(
      LockOptionsError,
    );
    await expect(locks.acquire(['a', 'b'], { fair: true })).rejects.toBeInstanceOf(
      LockOptionsError,
    );
    expect(locks.heldCount).toBe(0);
  });

  it('@Locked takes a list of templates or a keys function as a multi-lock', async () => {
    const { app, locks, other } = suite;
    const accounts = app.get(Accounts);
    expect(await accounts.transfer('a', 'b')).toEqual(['a', 'b']);
    expect(await accounts.byFunction('a', 'b')).toBe(2);
    const held = await other.locks.acquire('account:b');
    const waiting = accounts.transfer('a', 'b');
    expect(await locks.isLocked('account:a')).toBe(false);
    await held.release();
    expect(await waiting).toEqual(['a', 'b']);
    for (const keys of [[], [''], 'a:1', Array.from({ length: 65 }, (_, i) => `k${i}`)]) {
      await expect(accounts.anyKeys(keys)).rejects.toBeInstanceOf(LockKeyError);
    }
  });
});

describe('multi-locks on one Redis node', () => {
  const store = suiteStore('redis');
  afterAll(killChildren);

  it('takes a group with one script call', async () => {
    const { app, locks } = await lockApp(store.target);
    try {
      await locks.acquire(['warm:1', 'warm:2']).then((warm) => warm.release()); // scripts loaded
      await store.raw!.config('RESETSTAT');
      const group = await locks.acquire(['a', 'b', 'c', 'd']);
      const stats = await store.raw!.info('commandstats');
      const calls = [...stats.matchAll(/^cmdstat_(eval\w*|fcall\w*):calls=(\d+)/gm)];
      expect(calls.map(([line]) => line)).toEqual(['cmdstat_evalsha:calls=1']);
      await group.release();
    } finally {
      await app.close();
    }
  });

  it('opposite orders from 4 processes × 2 workers: no deadlock, no exclusion violation', async () => {
    const prefix = 'opposite:';
    const done = await runChildren((store.target as TestRedis).url, prefix, 4, [
      'opposite',
      '5000',
    ]);
    const cycles = done.reduce((sum, child) => sum + child.cycles, 0);
    expect(done.every((child) => child.cycles > 0)).toBe(true);
    expect(done.reduce((sum, child) => sum + child.violations, 0)).toBe(0);
    expect(Number(await store.raw!.get(`${prefix}count:counter`))).toBe(cycles);
  });
});

/** A promise and the function that settles it. */
function gate(): { opened: Promise<void>; open: () => void } {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { opened, open };
}

// A group that re-enters members its chain holds, beside siblings of that chain.
describe.each(STORE_KINDS)('multi-lock re-entry among siblings (%s store)', (kind) => {
  // Leases far longer than a loaded run's event-loop stalls: a 600 ms one was lost under load
  // (LockLostError from the group's attempt, as it should), and nothing here tests expiry.
  const suite = storeAppEach(kind, { leaseTime: 5_000, waitTime: 5_000 });

  it('a group refused by a busy member leaves the members it had re-entered', async () => {
    const { locks } = suite;
    await locks.run('a', () =>
      locks.run('b', async () => {
        const sibling = gate();
        const inside = gate();
        // A sibling of this chain is inside b: the group can re-enter a, not b.
        const holder = locks.run('b', () => {
          inside.open();
          return sibling.opened;
        });
        await inside.opened;
        let group: unknown;
        try {
          group = await locks.tryAcquire(['a', 'b']);
        } finally {
          // Also when the attempt throws: the chain's release waits for this sibling's hold.
          sibling.open();
        }
        await holder;
        expect(group).toBeNull();
        // a's nested slot is free again: another sibling re-enters it at once.
        expect(await locks.run('a', (lock) => lock.depth, { waitTime: 0 })).toBe(2);
      }),
    );
    expect(await locks.isLocked('a')).toBe(false);
    expect(locks.heldCount).toBe(0);
  });

  it('siblings re-entering [a, b] and [b, a] of their chain both finish (one order)', async () => {
    const { locks } = suite;
    const order: string[] = [];
    await locks.run(['a', 'b'], async () => {
      const group = (keys: string[]) =>
        locks.run(
          keys,
          async () => {
            order.push(keys.join(''));
            await sleep(5);
          },
          { waitTime: 2_000 },
        );
      await Promise.all([group(['a', 'b']), group(['b', 'a'])]);
    });
    expect(order.sort()).toEqual(['ab', 'ba']);
    expect(await locks.isLocked('a')).toBe(false);
    expect(await locks.isLocked('b')).toBe(false);
  });
});
