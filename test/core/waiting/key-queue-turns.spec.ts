import { LockHold } from '../../../lib/core/lock-hold';
import { KeyQueue } from '../../../lib/core/waiting/key-queue';
import { fakeHost, scripted } from './queue-kit';

jest.mock('../../../lib/time/clock', () => ({ now: () => Date.now() }));

const NO_LEASE_RETRY = 7_000;
const advance = (ms = 0) => jest.advanceTimersByTimeAsync(ms);
const permit = () => {
  const hold = new LockHold(
    { kind: 'permit', key: 'k', name: 'n', permits: 1 },
    'owner:1',
    30_000,
    true,
    undefined,
    0,
  );
  expect(hold.shared).toBe(true); // a permit's kind is shared
  return hold;
};

/** When the next waiter of a queue tries without a notice: the turn passing on. */
describe('KeyQueue turns', () => {
  let host: ReturnType<typeof fakeHost>;
  let queue: KeyQueue;

  beforeEach(async () => {
    jest.useFakeTimers();
    host = fakeHost();
    queue = new KeyQueue('n', 'n', host, NO_LEASE_RETRY);
    host.subscription.resolve();
    await advance();
  });
  afterEach(() => {
    queue.close(new Error('end'));
    jest.useRealTimers();
  });

  it('a head whose wait runs out between its attempts passes the turn: the next waiter tries at once', async () => {
    const writer = scripted();
    const reader = scripted();
    const timedOut = queue.wait(writer, 1_000, undefined);
    void queue.wait(reader, Infinity, undefined).catch(() => undefined);
    // Refused: the holders' lease runs 30 s on.
    writer.replies[0].resolve(30_000);
    await advance(999);
    expect(reader.replies).toHaveLength(0);
    await advance(1);
    await expect(timedOut).resolves.toBeNull();
    expect(reader.replies).toHaveLength(1);
  });

  it('a head whose signal aborts during its attempt passes the turn once that attempt is answered', async () => {
    const writer = scripted();
    const reader = scripted();
    const controller = new AbortController();
    const aborted = queue.wait(writer, Infinity, controller.signal);
    const reading = queue.wait(reader, Infinity, undefined);
    controller.abort(new Error('gave up'));
    await expect(aborted).rejects.toThrow('gave up');
    expect(reader.replies).toHaveLength(0);
    writer.replies[0].resolve(30_000);
    await advance();
    expect(reader.replies).toHaveLength(1);
    const granted = permit();
    reader.replies[0].resolve(granted);
    await expect(reading).resolves.toBe(granted);
  });

  /**
   * Two waiters; a notice comes while the first attempts, then its attempt is granted `hold`.
   * Returns the second waiter's attempt.
   */
  async function secondAfterNoticedGrant(hold: LockHold) {
    const first = scripted();
    const second = scripted();
    const granted = queue.wait(first, Infinity, undefined);
    void queue.wait(second, Infinity, undefined).catch(() => undefined);
    queue.notice();
    first.replies[0].resolve(hold);
    await granted;
    return second;
  }

  it('a shared grant passes the turn at once, also after a notice during its attempt', async () => {
    const second = await secondAfterNoticedGrant(permit());
    expect(second.replies).toHaveLength(1);
    // Refused: it retries when the earliest permit that frees its limit expires, not before.
    second.replies[0].resolve(2_000);
    await advance(2_000);
    expect(second.replies).toHaveLength(1);
    await advance(1);
    expect(second.replies).toHaveLength(2);
  });

  it('after an exclusive grant the next waiter waits for the release notice, also after a notice during the attempt', async () => {
    const second = await secondAfterNoticedGrant(
      new LockHold({ kind: 'lock', key: 'k', name: 'n' }, 'owner:1', 30_000, true, 1, 0),
    );
    await advance(29_999);
    expect(second.replies).toHaveLength(0);
    queue.notice();
    expect(second.replies).toHaveLength(1);
  });

  it('a waiter behind the head leaving changes nothing; close() passes no turn', async () => {
    const head = scripted();
    const behind = scripted();
    const last = scripted();
    void queue.wait(head, Infinity, undefined).catch(() => undefined);
    void queue.wait(behind, 500, undefined);
    void queue.wait(last, Infinity, undefined).catch(() => undefined);
    head.replies[0].resolve(30_000);
    await advance(500);
    expect(behind.replies).toHaveLength(0);
    expect(last.replies).toHaveLength(0);
    queue.close(new Error('end'));
    await advance();
    expect(last.replies).toHaveLength(0);
  });
});
