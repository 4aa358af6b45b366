import { Injectable } from '@nestjs/common';
import { LockAcquireTimeoutError, Locked, LockService } from '../../lib';
import { lockAppPairEach, type LockApp } from '../support/lock-app';
import { STORE_KINDS, suiteStore } from '../support/suite-store';

/** A plain lock whose key is another kind's key plus what an id built by concatenation adds. */
@Injectable()
class Plain {
  constructor(readonly locks: LockService) {}

  @Locked('<0>', { waitTime: 0 })
  take(_key: string): Promise<number> {
    return Promise.resolve(this.locks.holdCount(_key));
  }
}

/** Runs `fn` holding a kind of lock on key `x`. */
type Holding = (locks: LockService, fn: () => Promise<void>) => Promise<unknown>;

/** What the chain holds first, for each kind whose re-entry id was `name + "\0<suffix>"`. */
const HELD: [string, string, Holding][] = [
  ['a read lock', 'r', (locks, fn) => locks.run('x', fn, { mode: 'read' })],
  ['a write lock', 'w', (locks, fn) => locks.run('x', fn, { mode: 'write' })],
  ['a permit', 'p', (locks, fn) => locks.semaphore('x', { permits: 1 }).run(fn)],
];

describe.each(STORE_KINDS)(
  'keys with control characters never alias another hold (%s store)',
  (kind) => {
    const store = suiteStore(kind);
    let a: LockApp;
    let b: LockApp;
    // A long lease: a waiter woken within its wait was woken by the release.
    lockAppPairEach(
      store,
      { leaseTime: 30_000, waitTime: 5_000 },
      (first, second) => ([a, b] = [first, second]),
      { providers: [Plain] },
    );

    describe.each(HELD)('a chain holding %s on "x"', (_what, suffix, holding) => {
      const alias = `x\0${suffix}`;

      it('does not re-enter the plain lock on the key plus "\\0" and its letter, another client holds', async () => {
        const theirs = await b.locks.acquire(alias);
        let ran = false;
        try {
          await holding(a.locks, async () => {
            expect(await a.locks.tryAcquire(alias)).toBeNull();
            expect(await a.locks.tryAcquire([alias, 'y'])).toBeNull();
            await expect(a.app.get(Plain).take(alias)).rejects.toBeInstanceOf(
              LockAcquireTimeoutError,
            );
            ran = true;
          });
        } finally {
          await theirs.release();
        }
        expect(ran).toBe(true);
      });
    });

    it('a plain lock "x\\0r" held does not pass for the read lock "x"', async () => {
      const theirs = await b.locks.acquire('x', { mode: 'write' });
      try {
        await a.locks.run('x\0r', async () => {
          expect(await a.locks.tryAcquire('x', { mode: 'read' })).toBeNull();
        });
      } finally {
        await theirs.release();
      }
    });

    it('waiters for the read-write lock "k" and the plain lock "k\\0rw" each get their release', async () => {
      const rw = await b.locks.acquire('k', { mode: 'write' });
      const plain = await b.locks.acquire('k\0rw');
      const reading = a.locks.acquire('k', { mode: 'read', waitTime: 5_000 });
      const taking = a.locks.acquire('k\0rw', { waitTime: 5_000 });
      try {
        await plain.release();
        // Woken by its release: well within the wait, while the read-write lock is still held.
        const taken = await taking;
        expect(taken.key).toBe('k\0rw');
        await taken.release();
      } finally {
        await rw.release();
        await (await reading).release();
      }
    });
  },
);
