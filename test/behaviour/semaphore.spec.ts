import { Injectable } from '@nestjs/common';
import { lastValueFrom, Observable } from 'rxjs';
import {
  LockAcquireTimeoutError,
  LockLostError,
  LockOptionsError,
  LockService,
  Semaphore,
} from '../../lib';
import { lockApp, storeAppEach, storeAppPairEach } from '../support/lock-app';
import type { TestRedis } from '../support/redis-server';
import { STORE_KINDS, suiteStore } from '../support/suite-store';
import { killChildren } from '../support/child-processes';
import { CHILDREN_TIMEOUT, familyChild, runChildren } from './family-kit';
import { sleep, until } from '../../tools/time';

// Children take long to start on a busy machine (see CHILDREN_TIMEOUT).
jest.setTimeout(CHILDREN_TIMEOUT);

@Injectable()
class Exports {
  running = 0;
  most = 0;
  constructor(readonly locks: LockService) {}

  @Semaphore('export:<0>', { permits: 2 })
  async exportFor(_tenant: string, done: Promise<void>): Promise<void> {
    this.most = Math.max(this.most, ++this.running);
    await done;
    this.running--;
  }

  @Semaphore({ key: (tenant: string) => `single:${tenant}`, permits: 1, waitTime: 0 })
  async outer(tenant: string): Promise<string> {
    return this.inner(tenant);
  }

  @Semaphore('single:<0>', { permits: 1, waitTime: 0 })
  inner(_tenant: string): Promise<string> {
    return Promise.resolve('nested');
  }

  @Semaphore('stream:<0>', { permits: 1 })
  stream(_tenant: string, done: Promise<void>): Observable<number> {
    return new Observable((subscriber) => {
      subscriber.next(1);
      void done.then(() => subscriber.complete());
    });
  }
}

describe.each(STORE_KINDS)('semaphores through LockService (%s store)', (kind) => {
  // A long lease: a waiter woken within its wait was woken by the release.
  const suite = storeAppPairEach(
    kind,
    { leaseTime: 30_000, waitTime: 5_000 },
    { providers: [Exports] },
  );

  it('counts available permits and wakes a waiter on release', async () => {
    const { locks, other } = suite;
    const here = locks.semaphore('s', { permits: 2 });
    const there = other.locks.semaphore('s', { permits: 2 });
    expect(await here.available()).toBe(2);
    const first = await here.acquire();
    const second = await there.acquire();
    expect(await here.available()).toBe(0);
    expect(await there.tryAcquire()).toBeNull();
    await expect(here.acquire({ waitTime: 100 })).rejects.toBeInstanceOf(LockAcquireTimeoutError);
    const waiting = there.acquire({ waitTime: 5_000 });
    await first.release();
    const third = await waiting;
    expect(await here.available()).toBe(0);
    await second.release();
    expect(await here.available()).toBe(1);
    await third.release();
    expect(await here.available()).toBe(2);
  });

  it('hands permits over among many waiters of two services, woken by releases only', async () => {
    const { locks, other } = suite;
    // The lease is 30 s: a lost wake-up would exceed the 3 s wait and fail.
    let holders = 0;
    let most = 0;
    const end = Date.now() + 800;
    const worker = async (service: LockService) => {
      const semaphore = service.semaphore('busy', { permits: 2 });
      let cycles = 0;
      while (Date.now() < end) {
        await semaphore.run(
          async () => {
            most = Math.max(most, ++holders);
            await new Promise((resolve) => setImmediate(resolve));
            holders--;
          },
          { waitTime: 3_000 },
        );
        cycles++;
      }
      return cycles;
    };
    const cycles = await Promise.all(
      Array.from({ length: 6 }, (_, i) => worker(i % 2 ? locks : other.locks)),
    );
    expect(most).toBe(2);
    expect(Math.min(...cycles)).toBeGreaterThan(0);
    expect(await locks.semaphore('busy', { permits: 2 }).available()).toBe(2);
  }, 15_000);

  it('re-enters along the call chain with permits: 1', async () => {
    const { locks } = suite;
    const single = locks.semaphore('one', { permits: 1 });
    const result = await single.run(async (outer) => {
      expect(await single.available()).toBe(0);
      return single.run((inner) => [outer.depth, inner.depth], { waitTime: 0 });
    });
    expect(result).toEqual([1, 2]);
    expect(await single.available()).toBe(1);
  });

  it('rejects bad options with LockOptionsError', () => {
    const { locks } = suite;
    for (const options of [
      undefined,
      {},
      { permits: 0 },
      { permits: 1.5 },
      { permits: 1_000_001 },
    ]) {
      expect(() => locks.semaphore('s', options as { permits: number })).toThrow(LockOptionsError);
      expect(() => Semaphore('s', options as { permits: number })).toThrow(LockOptionsError);
    }
    expect(() => locks.semaphore('s', { permits: 1, extra: 1 } as never)).toThrow(LockOptionsError);
  });

  it('aborts the signal of a permit that expired while held', async () => {
    const { locks } = suite;
    // A lease a loaded machine's round trip cannot exceed: an acquire answered after its lease
    // is refused ("no answer within"), as its grant would already be over.
    const permit = await locks.semaphore('lease', { permits: 1 }).acquire({ leaseTime: 1_000 });
    await until(() => permit.signal.aborted, 5_000);
    expect(permit.signal.reason).toBeInstanceOf(LockLostError);
    // The holder is told when the lease counted from before its request ends, so no later than
    // the store's lease (which began when the request arrived): the permit comes back just after.
    await until(async () => (await locks.semaphore('lease', { permits: 1 }).available()) === 1);
    await expect(permit.release()).rejects.toBeInstanceOf(LockLostError);
  });

  it('grants each caller against its own limit, and skips when busy with onBusy: skip', async () => {
    const { locks, other } = suite;
    const wide = locks.semaphore('mixed', { permits: 3 });
    const narrow = other.locks.semaphore('mixed', { permits: 1 });
    const held = [await wide.acquire(), await wide.acquire()];
    expect(await narrow.available()).toBe(0);
    expect(await narrow.tryAcquire()).toBeNull();
    expect(await narrow.run(() => 'ran', { waitTime: 0, onBusy: 'skip' })).toBeUndefined();
    expect(await wide.available()).toBe(1);
    await Promise.all(held.map((permit) => permit.release()));
    expect(await narrow.run(() => 'ran', { waitTime: 0 })).toBe('ran');
  });

  it('revokes every permit on forceUnlock and tells this process’s holders', async () => {
    const { locks, other } = suite;
    // Holders in other processes learn it at their next renewal (a third of the lease).
    const semaphore = locks.semaphore('revoked', { permits: 2 });
    const permit = await semaphore.acquire();
    const there = await other.locks.semaphore('revoked', { permits: 2 }).acquire();
    expect(await semaphore.forceUnlock()).toBe(true);
    expect(permit.signal.aborted).toBe(true);
    expect(there.signal.aborted).toBe(false);
    await expect(there.release()).rejects.toBeInstanceOf(LockLostError); // it was revoked
    expect(permit.signal.reason).toBeInstanceOf(LockLostError);
    expect(await semaphore.available()).toBe(2);
  });

  it('@Semaphore limits concurrent calls, re-enters, and holds for an Observable', async () => {
    const { app, locks } = suite;
    const jobs = app.get(Exports);
    let finish!: () => void;
    const done = new Promise<void>((resolve) => (finish = resolve));
    const calls = Array.from({ length: 5 }, () => jobs.exportFor('t1', done));
    const sem = locks.semaphore('export:t1', { permits: 2 });
    await until(() => jobs.running === 2);
    expect(await sem.available()).toBe(0);
    finish();
    await Promise.all(calls);
    expect(jobs.most).toBe(2);
    expect(await jobs.outer('t1')).toBe('nested');

    let complete!: () => void;
    const streamed = new Promise<void>((resolve) => (complete = resolve));
    const values = lastValueFrom(jobs.stream('t1', streamed));
    const stream = locks.semaphore('stream:t1', { permits: 1 });
    await until(async () => (await stream.available()) === 0);
    complete();
    expect(await values).toBe(1);
    expect(await stream.available()).toBe(1);
  });
});

describe('semaphores across processes (Redis)', () => {
  const store = suiteStore('redis');
  afterAll(killChildren);

  it('never has more than N holders across 4 processes', async () => {
    const done = await runChildren((store.target as TestRedis).url, 'sem:', 4, [
      'permits',
      '3',
      '1500',
    ]);
    expect(done.every((child) => child.cycles > 0)).toBe(true);
    expect(done.reduce((sum, child) => sum + child.violations, 0)).toBe(0);
  });

  it('gives back a SIGKILLed holder’s permit within one lease', async () => {
    const prefix = 'killed:';
    const holder = familyChild((store.target as TestRedis).url, prefix, ['hold-permit', '1']);
    await holder.line(/^held$/);
    const { app, locks } = await lockApp(store.target, { keyPrefix: prefix, leaseTime: 1_000 });
    try {
      const semaphore = locks.semaphore('s', { permits: 1 });
      expect(await semaphore.tryAcquire()).toBeNull();
      const waiting = semaphore.acquire({ waitTime: 10_000 });
      holder.kill();
      const killedAt = Date.now();
      const permit = await waiting;
      // The child's lease is 1 s: the permit is free one lease after the kill, and the waiter,
      // whose wait is capped at that expiry, takes it then. The margin is for a loaded machine;
      // a permit that did not come back would end the 10 s wait instead.
      expect(Date.now() - killedAt).toBeLessThan(1_000 + 2_000);
      await permit.release();
    } finally {
      await app.close();
    }
  });
});

// Leases of permits: renewed while held, and the cap they put on a waiter's wait.
describe.each(STORE_KINDS)('semaphore permit leases (%s store)', (kind) => {
  const suite = storeAppEach(kind, { leaseTime: 600, waitTime: 5_000 });

  it('keeps a permit past its lease while held (watchdog), and disposes of it', async () => {
    const { prefix, store } = suite;
    // Its own 1.5 s lease: a loaded run's event-loop stall can outlast the suite's 600 ms.
    const own = await lockApp(store.target, { keyPrefix: prefix, leaseTime: 1_500 });
    try {
      const semaphore = own.locks.semaphore('renewed', { permits: 1 });
      const permit = await semaphore.acquire();
      await sleep(2_000); // past the lease: only renewals keep it
      expect(permit.signal.reason).toBeUndefined();
      expect(await semaphore.available()).toBe(0);
      expect(await semaphore.tryAcquire()).toBeNull();
      await permit[Symbol.asyncDispose]();
      expect(await semaphore.available()).toBe(1);
    } finally {
      await own.app.close();
    }
  });

  it('wakes a waiter when a permit with a lease of its own runs out, without any release', async () => {
    const { store } = suite;
    // A 30 s default lease: the waiter's only cue is the held permit's 300 ms expiry.
    const slow = await lockApp(store.target, { leaseTime: 30_000 });
    try {
      const semaphore = slow.locks.semaphore('expiring', { permits: 1 });
      const permit = await semaphore.acquire({ leaseTime: 300 });
      const started = Date.now();
      const next = await semaphore.acquire({ waitTime: 10_000 });
      expect(Date.now() - started).toBeLessThan(5_000); // well before the wait or a lease ends
      // Its holder is told: the permit's own expiry timer fires about when the waiter takes it.
      await until(() => permit.signal.aborted, 1_000);
      await next.release();
    } finally {
      await slow.app.close();
    }
  });
});
