import { EventEmitter } from 'node:events';
import type { INestApplication } from '@nestjs/common';
import { LockLostError, type LockHandle, type LockService } from '../../lib';
import { lockApp } from '../support/lock-app';
import { suiteRedis } from '../support/suite-redis';
import { settled, watchUnhandledRejections } from '../faults/fault-kit';
import { detach } from '../faults/timing-kit';
import { until } from '../../tools/time';

/** What a callback saw of lock ownership. */
interface Seen {
  current: string | undefined;
  holds: boolean;
}

/**
 * A concurrency-1 job queue as many libraries write it: the next job starts from the previous
 * job's continuation, so it runs in the async context of whoever started the queue draining.
 */
function serialQueue() {
  const pending: (() => Promise<void>)[] = [];
  let draining = false;
  const drain = async () => {
    draining = true;
    while (pending.length > 0) await pending.shift()!();
    draining = false;
  };
  return <T>(job: () => T | Promise<T>): Promise<T> =>
    new Promise<T>((resolve, reject) => {
      pending.push(async () => {
        try {
          resolve(await job());
        } catch (error) {
          reject(error);
        }
      });
      if (!draining) void drain();
    });
}

describe('lock ownership and async context (queues, emitters, library callbacks)', () => {
  watchUnhandledRejections();
  const suite = suiteRedis();
  let app: INestApplication;
  let locks: LockService;

  beforeAll(async () => ({ app, locks } = await lockApp(suite.redis)));
  afterAll(() => app?.close());

  const seen = (key: string): Seen => ({
    current: locks.current()?.key,
    holds: locks.isHeldByCurrentContext(key),
  });

  it('locks.detach(fn) runs fn outside every lock context and returns its result', async () => {
    // issue 8, defect 2
    const inside = await locks.run('detach', () =>
      detach(locks, () => ({ ...seen('detach'), result: 42 })),
    );
    expect(inside).toEqual({ current: undefined, holds: false, result: 42 });
    await expect(
      locks.run('detach', () => detach(locks, () => Promise.resolve('async'))),
    ).resolves.toBe('async');
  });

  it('a job another request enqueues through detach on a concurrency-1 queue does not re-enter a lock held by the queue’s starter', async () => {
    // issue 8, defect 2
    const enqueue = serialQueue();
    const probe = async () => {
      const held = seen('queue');
      const handle = await locks.tryAcquire('queue'); // busy, unless it re-enters
      await handle?.release();
      return { ...held, reentered: handle !== null };
    };
    let openGate = () => undefined as void;
    const gate = new Promise<void>((resolve) => (openGate = resolve));
    let finish = () => undefined as void;
    let started = false;
    // Request 1 holds the lock and starts the queue draining; its job waits for the others.
    const request1 = locks.run('queue', async () => {
      const job = enqueue(() => gate);
      started = true;
      await job;
      await new Promise<void>((resolve) => (finish = resolve));
    });
    await until(() => started);
    // Request 2 (this chain, holding nothing) enqueues a plain job and a detached one.
    const plain = settled(enqueue(probe));
    const detached = settled(enqueue(() => detach(locks, probe)));
    openGate();
    const outcomes = { plain: await plain, detached: await detached };
    finish();
    await request1;
    expect(outcomes).toEqual({
      // Control: AsyncLocalStorage lets the plain job in (the hazard detach is for).
      plain: { current: 'queue', holds: true, reentered: true },
      detached: { current: undefined, holds: false, reentered: false },
    });
  });

  it('a listener wrapped in detach, of an EventEmitter created inside a hold, sees no lock', async () => {
    // issue 8, defect 2
    let emitter: EventEmitter | undefined;
    let finish = () => undefined as void;
    const holding = locks.run('emitter', async () => {
      emitter = new EventEmitter();
      // Its events come from a timer of the hold's chain (as a socket's or a stream's would).
      const ticker = setInterval(() => emitter!.emit('tick'), 5);
      await new Promise<void>((resolve) => (finish = resolve));
      clearInterval(ticker);
    });
    await until(() => emitter !== undefined);
    // Another request (this chain, holding nothing) listens.
    let plain: Seen | undefined;
    let detached: Seen | Error | undefined;
    emitter!.once('tick', () => (plain = seen('emitter')));
    emitter!.once('tick', () => {
      try {
        detach(locks, () => (detached = seen('emitter')));
      } catch (error) {
        detached = error as Error;
      }
    });
    await until(() => plain !== undefined, 1_000); // one emit runs both listeners
    finish();
    await holding;
    expect({ plain, detached }).toEqual({
      plain: { current: 'emitter', holds: true }, // control: the hazard
      detached: { current: undefined, holds: false },
    });
  });

  it('a sibling queued for the nested slot is refused with LockLostError after the lock was lost, as a direct re-entry is', async () => {
    // issue 8, defect 16
    let siblingRan = false;
    let direct: unknown;
    let sibling: Promise<unknown> | undefined;
    let release: (() => void) | undefined;
    const outer = settled(
      locks.run('sibling', async () => {
        const first = settled(locks.run('sibling', () => new Promise<void>((r) => (release = r))));
        sibling = settled(locks.run('sibling', () => void (siblingRan = true)));
        await until(() => release !== undefined); // the first holds the nested slot
        await locks.forceUnlock('sibling'); // lost: this service is told at once
        direct = await settled(locks.run('sibling', () => 'direct'));
        release!();
        await first;
        await sibling;
      }),
    );
    expect(await outer).toBeInstanceOf(LockLostError);
    expect({
      directReentry: direct instanceof LockLostError,
      queuedSibling: (await sibling) instanceof LockLostError,
      siblingBodyRan: siblingRan,
    }).toEqual({ directReentry: true, queuedSibling: true, siblingBodyRan: false });
  });

  it('lockLost$ subscribers and abort listeners run outside every chain’s lock context', async () => {
    // issue 8, defect 17
    // A fresh app: no watchdog timer is running yet.
    const fresh = await lockApp(suite.redis, { leaseTime: 600 });
    const { locks } = fresh;
    const seen = (key: string): Seen => ({
      current: locks.current()?.key,
      holds: locks.isHeldByCurrentContext(key),
    });
    const inLostSubscriber: Seen[] = [];
    const inAbortListener: Seen[] = [];
    const subscription = locks.lockLost$.subscribe(() => inLostSubscriber.push(seen('billing')));
    let victim: LockHandle | undefined;
    try {
      // Chain A holds 'billing' (explicit lease: no watchdog yet) and starts the watchdog
      // timer by taking a watchdog lock inside it.
      let done = () => undefined as void;
      const chainA = locks.run(
        'billing',
        async () => {
          const inner = await locks.acquire('billing:inner');
          await new Promise<void>((resolve) => (done = resolve));
          await inner.release();
        },
        { leaseTime: 10_000 },
      );
      await until(async () => locks.isLocked('billing:inner'));
      // Chain B (here, holding nothing) holds the victim; another client deletes it.
      victim = await locks.acquire('victim');
      victim.signal.addEventListener('abort', () => inAbortListener.push(seen('billing')));
      await suite.raw.del(`${fresh.prefix}victim`);
      await until(() => victim!.signal.aborted, 2_000);
      done();
      await chainA;
    } finally {
      subscription.unsubscribe();
      await victim?.release().catch(() => undefined);
      await fresh.app.close();
    }
    expect({ inLostSubscriber, inAbortListener }).toEqual({
      inLostSubscriber: [{ current: undefined, holds: false }],
      inAbortListener: [{ current: undefined, holds: false }],
    });
  });
});
