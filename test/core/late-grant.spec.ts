import { LockEngine } from '../../lib/core/lock-engine';
import { MemoryLockStore } from '../../lib/stores/memory/memory-store';
import { openStore, type OpenedStore } from '../../lib/nest/open-store';
import type { AcquireReply, AcquireRequest } from '../../lib/store/lock-store';
import { sleep } from '../../tools/time';
import { testEngine } from './engine-kit';

/** Lease of every engine here: an attempt is bounded by it (wait ≥ lease), ms. */
const LEASE = 900;
/** How late the delayed answer comes: past the attempt bound (LEASE). */
const LATE = LEASE + 600;

/** An engine on `shared`, whose store answers the acquires `delay` picks `LATE` ms late. */
function engineOn(shared: MemoryLockStore, delay: (request: AcquireRequest) => boolean) {
  const store: OpenedStore = openStore({ store: shared, syncTimeout: 1_000 }, () => undefined);
  const acquire = store.acquire.bind(store);
  store.acquire = (request) => {
    // The store grants (or refuses) at once; only its answer is held back.
    const answer = acquire(request);
    if (!delay(request)) return answer;
    return new Promise<AcquireReply>((resolve, reject) =>
      setTimeout(() => void answer.then(resolve, reject), LATE),
    );
  };
  const engine = testEngine(store, {
    keyPrefix: '',
    leaseTime: LEASE,
    waitTime: 5_000,
    onLockLost: 'ignore',
  });
  return { engine, store };
}

describe('a late grant of an owner id that is used again', () => {
  const opened: { engine: LockEngine; store: OpenedStore }[] = [];
  afterEach(async () => {
    await Promise.all(opened.map(({ engine }) => engine.close()));
    await Promise.all(opened.map(({ store }) => store.close()));
    opened.length = 0;
  });

  it('does not free the fair lock its waiter took with a later attempt', async () => {
    const shared = new MemoryLockStore();
    let attempts = 0;
    // The waiter's third attempt (the one its turn's notice sends) is granted, but answered late.
    const waiter = engineOn(shared, (request) => request.kind === 'fair' && ++attempts === 3);
    const holder = engineOn(shared, () => false);
    const other = engineOn(shared, () => false);
    opened.push(waiter, holder, other);

    const held = await holder.engine.acquire('k', { fair: true });
    const waiting = waiter.engine.acquire('k', { fair: true, waitTime: 5_000 });
    // Let the waiter queue and subscribe (attempts 1 and 2), then free the lock.
    while (attempts < 2) await sleep(5);
    await held.release();
    const handle = await waiting;
    expect(attempts).toBeGreaterThanOrEqual(4); // attempt 3 timed out; a later one took the lock

    // Attempt 3's answer arrives now: the waiter still holds the lock.
    await sleep(LATE);
    expect(await other.engine.tryAcquire('k', { fair: true })).toBeNull();
    expect(handle.signal.aborted).toBe(false);
    await handle.release();
    const after = await other.engine.tryAcquire('k', { fair: true });
    expect(after).not.toBeNull();
    await after!.release();
  }, 15_000);
});
