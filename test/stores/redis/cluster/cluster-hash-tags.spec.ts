import { LockKeyError, type LockService } from '../../../../lib';
import { clusterAppSuite } from './cluster-kit';

type Take = (locks: LockService, key: string) => Promise<{ release(): Promise<void> } | null>;

/** A try of `key` in one kind of lock, and another client's try of what it excludes. */
const KINDS: [string, Take, Take][] = [
  ['a plain lock', (locks, key) => locks.tryAcquire(key), (locks, key) => locks.tryAcquire(key)],
  [
    'a fenced lock',
    (locks, key) => locks.tryAcquire(key, { fencing: true }),
    (locks, key) => locks.tryAcquire(key, { fencing: true }),
  ],
  [
    'a fair lock',
    (locks, key) => locks.tryAcquire(key, { fair: true }),
    (locks, key) => locks.tryAcquire(key, { fair: true }),
  ],
  [
    'a read lock',
    (locks, key) => locks.tryAcquire(key, { mode: 'read' }),
    (locks, key) => locks.tryAcquire(key, { mode: 'write' }),
  ],
  [
    'a write lock',
    (locks, key) => locks.tryAcquire(key, { mode: 'write' }),
    (locks, key) => locks.tryAcquire(key, { mode: 'read' }),
  ],
  [
    'a permit',
    (locks, key) => locks.semaphore(key, { permits: 1 }).tryAcquire(),
    (locks, key) => locks.semaphore(key, { permits: 1 }).tryAcquire(),
  ],
];

/** Keys with braces on a 3-master Redis Cluster (one for the file). */
describe('hash tags on a Redis Cluster', () => {
  const { apps } = clusterAppSuite();

  it.each(['{acct:1}:pay', '}x{y}', 'x{y}}z{'])(
    'a key with a well-formed hash tag, %j: every kind is taken and released (another client takes it right after)',
    async (key) => {
      const [locks, other] = await apps();
      for (const [what, take, excluded] of KINDS) {
        const held = await take(locks, key);
        expect({ what, held: held !== null }).toEqual({ what, held: true });
        const busy = await excluded(other, key);
        await busy?.release();
        expect({ what, busy: busy !== null }).toEqual({ what, busy: false });
        await held!.release();
        // The release worked (a failed one leaves the lock for its 30 s lease).
        const next = await excluded(other, key);
        expect({ what, next: next !== null }).toEqual({ what, next: true });
        await next!.release();
      }
    },
  );

  it.each(['a{b', '{}x', 'a}b'])(
    'a key whose hash tag is not well formed, %j, is refused with LockKeyError by every kind',
    async (key) => {
      const [locks] = await apps();
      for (const [, take] of KINDS) {
        await expect(Promise.resolve().then(() => take(locks, key))).rejects.toBeInstanceOf(
          LockKeyError,
        );
      }
    },
  );
});
