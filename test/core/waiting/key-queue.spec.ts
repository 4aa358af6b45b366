import { LockHold } from '../../../lib/core/lock-hold';
import { KeyQueue } from '../../../lib/core/waiting/key-queue';
import { LockRedisError } from '../../../lib/errors';
import { fakeHost, scripted } from './queue-kit';

/** How far the engine's clock is ahead of the fake timers' (negative: a timer fires early). */
const mockClockSkew = { ms: 0 };
jest.mock('../../../lib/time/clock', () => ({ now: () => Date.now() + mockClockSkew.ms }));

const NO_LEASE_RETRY = 7_000;
const hold = (leaseTime = 30_000) =>
  new LockHold({ kind: 'lock', key: 'k', name: 'n' }, 'owner:1', leaseTime, true, 1, 0);
/** Advances fake time by `ms`, running promise callbacks in between. */
const advance = (ms = 0) => jest.advanceTimersByTimeAsync(ms);
const connectionError = () => new LockRedisError('k', 'acquire', new Error('ECONNRESET'));
const refusedError = () => new LockRedisError('k', 'acquire', new Error('NOPERM'), true);

describe('KeyQueue', () => {
  let host: ReturnType<typeof fakeHost>;

  beforeEach(() => {
    jest.useFakeTimers();
    mockClockSkew.ms = 0;
    host = fakeHost();
  });
  afterEach(() => jest.useRealTimers());

  /** A queue whose subscription took effect. */
  async function subscribedQueue(): Promise<KeyQueue> {
    const queue = new KeyQueue('n', 'n', host, NO_LEASE_RETRY);
    host.subscription.resolve();
    await advance();
    return queue;
  }

  /** A subscribed queue whose one waiter, `attempt`, was granted at once. */
  async function grantedOnce() {
    const queue = await subscribedQueue();
    const attempt = scripted();
    const waiting = queue.wait(attempt, Infinity, undefined);
    attempt.replies[0].resolve(hold());
    await waiting;
    return { queue, attempt };
  }

  /** A subscribed queue with two waiters: `head` (its wait is `waiting`) and `next`. */
  async function headAndNext() {
    const queue = await subscribedQueue();
    const head = scripted();
    const next = scripted();
    const waiting = queue.wait(head, Infinity, undefined);
    void queue.wait(next, Infinity, undefined).catch(() => undefined);
    return { queue, head, next, waiting };
  }

  /** A subscribed queue whose one waiter's first attempt, `attempt`, was refused for `ttl` ms. */
  async function refusedOnce(ttl: number) {
    const queue = await subscribedQueue();
    const attempt = scripted();
    void queue.wait(attempt, Infinity, undefined).catch(() => undefined);
    attempt.replies[0].resolve(ttl);
    return { queue, attempt };
  }

  it('subscribes at creation and sends one attempt once subscribed, from the head only', async () => {
    const queue = new KeyQueue('n', 'n', host, NO_LEASE_RETRY);
    expect(host.subscribe).toHaveBeenCalledWith('n');
    const first = scripted();
    const second = scripted();
    const a = queue.wait(first, Infinity, undefined);
    const b = queue.wait(second, Infinity, undefined);
    await advance();
    expect(first.replies).toHaveLength(0);
    host.subscription.resolve();
    await advance();
    expect(first.replies).toHaveLength(1);
    expect(second.replies).toHaveLength(0);
    const granted = hold();
    first.replies[0].resolve(granted);
    await expect(a).resolves.toBe(granted);
    // The next waiter waits for this hold's release notice.
    await advance(1_000);
    expect(second.replies).toHaveLength(0);
    queue.notice();
    expect(second.replies).toHaveLength(1);
    queue.close(new Error('end'));
    await expect(b).rejects.toThrow('end');
  });

  it('still attempts when subscribing fails, and reports the failure', async () => {
    const queue = new KeyQueue('n', 'n', host, NO_LEASE_RETRY);
    const attempt = scripted();
    void queue.wait(attempt, Infinity, undefined).catch(() => undefined);
    const error = new Error('SUBSCRIBE failed');
    host.subscription.reject(error);
    await advance();
    expect(host.failed).toHaveBeenCalledWith(error);
    expect(attempt.replies).toHaveLength(1);
    queue.close(new Error('end'));
  });

  it('a notice triggers an attempt; notices during an attempt trigger exactly one more', async () => {
    const queue = await subscribedQueue();
    const attempt = scripted();
    const waiting = queue.wait(attempt, Infinity, undefined);
    expect(attempt.replies).toHaveLength(1);
    attempt.replies[0].resolve(60_000);
    await advance();
    queue.notice();
    expect(attempt.replies).toHaveLength(2);
    queue.notice();
    queue.notice();
    expect(attempt.replies).toHaveLength(2);
    attempt.replies[1].resolve(60_000);
    await advance();
    expect(attempt.replies).toHaveLength(3);
    attempt.replies[2].resolve(60_000);
    await advance(59_999);
    expect(attempt.replies).toHaveLength(3);
    const granted = hold();
    queue.notice();
    attempt.replies[3].resolve(granted);
    await expect(waiting).resolves.toBe(granted);
  });

  it('retries 1 ms after the holder’s TTL (PTTL is truncated), and after noLeaseRetry for a lock without a lease', async () => {
    const { queue, attempt } = await refusedOnce(300);
    await advance(300);
    expect(attempt.replies).toHaveLength(1);
    await advance(1);
    expect(attempt.replies).toHaveLength(2);
    attempt.replies[1].resolve(Infinity);
    await advance(NO_LEASE_RETRY - 1);
    expect(attempt.replies).toHaveLength(2);
    await advance(1);
    expect(attempt.replies).toHaveLength(3);
    queue.close(new Error('end'));
  });

  it('a retry timer that fires before the holder’s TTL is over (the event loop’s time lagging) waits for the rest', async () => {
    const { queue, attempt } = await refusedOnce(300);
    await advance(0);
    // The timer fires 301 ms on, when the engine's clock has moved only 281 ms.
    mockClockSkew.ms = -20;
    await advance(301);
    expect(attempt.replies).toHaveLength(1);
    await advance(19);
    expect(attempt.replies).toHaveLength(1);
    await advance(1);
    expect(attempt.replies).toHaveLength(2);
    queue.close(new Error('end'));
  });

  it('retries a connection error after 100 ms; the head keeps its place', async () => {
    const { queue, head, next, waiting } = await headAndNext();
    head.replies[0].reject(connectionError());
    await advance(99);
    expect(head.replies).toHaveLength(1);
    await advance(1);
    expect(head.replies).toHaveLength(2);
    expect(next.replies).toHaveLength(0);
    const granted = hold();
    head.replies[1].resolve(granted);
    await expect(waiting).resolves.toBe(granted);
    queue.close(new Error('end'));
  });

  it('rejects the head with an error Redis refused; the next waiter tries at once', async () => {
    const { queue, head, next, waiting } = await headAndNext();
    const error = refusedError();
    head.replies[0].reject(error);
    await expect(waiting).rejects.toBe(error);
    expect(next.replies).toHaveLength(1);
    queue.close(new Error('end'));
  });

  it('hands a grant for a waiter that left to host.abandoned', async () => {
    const queue = await subscribedQueue();
    const attempt = scripted();
    const waiting = queue.wait(attempt, 50, undefined);
    await advance(50);
    await expect(waiting).resolves.toBeNull();
    const late = hold();
    attempt.replies[0].resolve(late);
    await advance();
    expect(host.abandoned).toHaveBeenCalledWith(late);
    expect(host.abandoned).toHaveBeenCalledTimes(1);
  });

  it('lingers 1 s after its last waiter, then unsubscribes and reports itself dropped', async () => {
    const { queue, attempt } = await grantedOnce();
    await advance(999);
    expect(host.unsubscribe).not.toHaveBeenCalled();
    expect(host.dropped).not.toHaveBeenCalled();
    await advance(1);
    expect(host.unsubscribe).toHaveBeenCalledWith('n');
    expect(host.dropped).toHaveBeenCalledWith(queue);
    // A dropped queue sends no more attempts.
    queue.notice();
    expect(attempt.replies).toHaveLength(1);
  });

  it('a caller whose signal had aborted leaves no queue behind (no leaked subscription)', async () => {
    const queue = await subscribedQueue();
    const controller = new AbortController();
    controller.abort(new Error('gave up'));
    const attempt = scripted();
    await expect(queue.wait(attempt, Infinity, controller.signal)).rejects.toThrow('gave up');
    expect(attempt.replies).toHaveLength(0);
    await advance(1_000);
    expect(host.unsubscribe).toHaveBeenCalledWith('n');
    expect(host.dropped).toHaveBeenCalledWith(queue);
  });

  it('subscribes again after a reconnect while its SUBSCRIBE is still unanswered', () => {
    const queue = new KeyQueue('n', 'n', host, NO_LEASE_RETRY);
    void queue.wait(scripted(), Infinity, undefined).catch(() => undefined);
    expect(host.subscribe).toHaveBeenCalledTimes(1);
    queue.reconnected(); // the break may have swallowed the first SUBSCRIBE
    expect(host.subscribe).toHaveBeenCalledTimes(2);
  });

  it('a caller back within the linger time keeps the queue subscribed', async () => {
    const { queue } = await grantedOnce();
    await advance(500);
    const again = scripted();
    const waiting = queue.wait(again, Infinity, undefined);
    expect(again.replies).toHaveLength(1);
    await advance(5_000);
    expect(host.dropped).not.toHaveBeenCalled();
    expect(host.subscribe).toHaveBeenCalledTimes(1);
    again.replies[0].resolve(hold());
    await waiting;
    await advance(1_000);
    expect(host.dropped).toHaveBeenCalledTimes(1);
  });

  it('reports an UNSUBSCRIBE failure to host.failed', async () => {
    const error = new Error('UNSUBSCRIBE failed');
    host.unsubscribe.mockImplementation(() => Promise.reject(error));
    const queue = await subscribedQueue();
    queue.close(new Error('end'));
    await advance();
    expect(host.failed).toHaveBeenCalledWith(error);
  });

  it('close(reason) rejects every waiter and drops the queue at once', async () => {
    const queue = await subscribedQueue();
    const waits = [scripted(), scripted(), scripted()].map((attempt) =>
      queue.wait(attempt, Infinity, undefined),
    );
    const reason = new Error('shutting down');
    queue.close(reason);
    for (const waiting of waits) await expect(waiting).rejects.toBe(reason);
    expect(host.dropped).toHaveBeenCalledWith(queue);
    expect(host.unsubscribe).toHaveBeenCalledWith('n');
  });

  it('after a release heard by others, holds back on a notice by 2 ms per release it is early', async () => {
    const { queue, attempt } = await grantedOnce();
    queue.released(3); // two other processes heard it: they take their turns first
    void queue.wait(attempt, Infinity, undefined).catch(() => undefined);
    attempt.replies[1].resolve(500);
    await advance();
    queue.notice(); // its own release's: early by two
    await advance(3);
    expect(attempt.replies).toHaveLength(2);
    await advance(1);
    expect(attempt.replies).toHaveLength(3);
    queue.close(new Error('end'));
  });

  /**
   * A queue that took the lock and released it to `listeners` processes, whose next waiter then
   * gave up: it lingers, no notice seen since its win.
   */
  async function lingeringAfterRelease(listeners: number) {
    const { queue, attempt } = await grantedOnce();
    queue.released(listeners);
    const waiting = queue.wait(attempt, 10, undefined);
    attempt.replies[1].resolve(500);
    await advance(10);
    await expect(waiting).resolves.toBeNull();
    return queue;
  }

  it('passes its turn on when it comes with no waiter left (once), and drops itself', async () => {
    host = fakeHost(true);
    const queue = await lingeringAfterRelease(3);
    queue.notice(); // its own release's
    queue.notice(); // early by one: another process's turn
    expect(host.passTurn).not.toHaveBeenCalled();
    expect(host.dropped).not.toHaveBeenCalled();
    queue.notice(); // its turn, and nobody here wants it
    expect(host.passTurn).toHaveBeenCalledTimes(1);
    expect(host.passTurn).toHaveBeenCalledWith('n');
    expect(host.dropped).toHaveBeenCalledWith(queue);
    expect(host.unsubscribe).toHaveBeenCalledWith('n');
    // Dropped: later notices (its own pass among them) pass nothing on.
    queue.notice();
    queue.notice();
    queue.notice();
    expect(host.passTurn).toHaveBeenCalledTimes(1);
  });

  it('lingers through notices when nobody waits and others count on no turn of it', async () => {
    host = fakeHost(true);
    // Its last release was heard by nobody else: others wait for no turn of it.
    const alone = await lingeringAfterRelease(1);
    for (let i = 0; i < 3; i++) alone.notice();
    expect(host.passTurn).not.toHaveBeenCalled();
    expect(host.dropped).not.toHaveBeenCalled();
    await advance(1_000);
    expect(host.dropped).toHaveBeenCalledWith(alone);
  });

  it('ends the hold-back after its own release at the next notice that is not that release’s', async () => {
    const queue = await subscribedQueue();
    const attempt = scripted();
    const waiting = queue.wait(attempt, Infinity, undefined);
    queue.releasing(); // a release of this process goes out (another of its callers')
    queue.released(2, Date.now() + 2);
    attempt.replies[0].resolve(500); // busy: the holder the release was for
    await advance();
    queue.notice(); // the release's own notice: the hold-back stays
    await advance(1);
    expect(attempt.replies).toHaveLength(1);
    queue.notice(); // another process released since: its turn came and went
    await advance();
    expect(attempt.replies).toHaveLength(2);
    attempt.replies[1].resolve(hold());
    await expect(waiting).resolves.toBeInstanceOf(LockHold);
    queue.close(new Error('end'));
  });

  it('holds back the full 2 ms when no other notice comes', async () => {
    const queue = await subscribedQueue();
    const attempt = scripted();
    void queue.wait(attempt, Infinity, undefined).catch(() => undefined);
    attempt.replies[0].resolve(500);
    await advance();
    queue.releasing();
    queue.released(2, Date.now() + 2);
    queue.notice(); // its own
    await advance(1);
    expect(attempt.replies).toHaveLength(1);
    await advance(1);
    expect(attempt.replies).toHaveLength(2);
    queue.close(new Error('end'));
  });

  it('without a store that can pass a turn, drops itself at its turn without passing it', async () => {
    const queue = await lingeringAfterRelease(3);
    queue.notice();
    queue.notice();
    expect(host.dropped).not.toHaveBeenCalled();
    queue.notice(); // its turn
    expect(host.dropped).toHaveBeenCalledWith(queue);
  });

  it('without a subscription, a local release or a reconnect triggers an attempt', async () => {
    const queue = new KeyQueue('n', 'n', host, NO_LEASE_RETRY);
    const attempt = scripted();
    void queue.wait(attempt, Infinity, undefined).catch(() => undefined);
    host.subscription.reject(new Error('no SUBSCRIBE'));
    await advance();
    attempt.replies[0].resolve(60_000);
    await advance();
    queue.released(1);
    expect(attempt.replies).toHaveLength(2);
    attempt.replies[1].resolve(60_000);
    await advance();
    host.subscribe.mockImplementation(() => Promise.resolve());
    queue.reconnected();
    await advance();
    expect(host.subscribe).toHaveBeenCalledTimes(2);
    expect(attempt.replies).toHaveLength(3);
    queue.close(new Error('end'));
  });
});
