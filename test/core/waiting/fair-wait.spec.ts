import type { LockHold } from '../../../lib/core/lock-hold';
import { FairWait, type FairWaitHost } from '../../../lib/core/waiting/fair-wait';

jest.mock('../../../lib/time/clock', () => ({ now: () => Date.now() }));

const HOLD = { owner: 'me' } as unknown as LockHold;

/**
 * A fair waiter against a scripted store: each attempt answers the next of `answers` (a wait in
 * ms, or the hold), and the times of the attempts are recorded.
 */
function scripted(answers: (number | LockHold)[]) {
  const attempts: number[] = [];
  let left = 0;
  const host: FairWaitHost = {
    attempt: () => {
      attempts.push(Date.now());
      return Promise.resolve(answers.shift() ?? HOLD);
    },
    leave: () => {
      left++;
      return Promise.resolve();
    },
    subscribe: () => Promise.resolve(true),
    unsubscribe: () => Promise.resolve(),
  };
  return { host, attempts, left: () => left };
}

/** Lets the waiter's promise callbacks run. */
const settle = async () => {
  for (let i = 0; i < 5; i++) await Promise.resolve();
};

describe('FairWait', () => {
  beforeEach(() => {
    jest.useFakeTimers();
    jest.setSystemTime(0);
  });
  afterEach(() => jest.useRealTimers());

  it('comes back at least every renewEvery ms, however long the store asks it to wait', async () => {
    const store = scripted([30_000, 30_000, 30_000, 30_000, 30_000]);
    const wait = new FairWait(store.host, 10_000, 1_000, undefined);
    const held = wait.run(100);
    for (let i = 0; i < 5; i++) {
      await settle();
      jest.advanceTimersByTime(1_000);
    }
    await settle();
    await expect(held).resolves.toBe(HOLD);
    // Once subscribed, then every second: its place, which lasts its place timeout from each
    // attempt, never runs out while it lives.
    expect(store.attempts).toEqual([0, 1_000, 2_000, 3_000, 4_000, 5_000]);
    expect(store.left()).toBe(0);
  });

  it('waits on by its attempts when its subscription does not answer (a cut connection), and ends with its wait', async () => {
    const store = scripted([30_000, 30_000, 30_000, 30_000]);
    const host = { ...store.host, subscribe: () => new Promise<boolean>(() => undefined) };
    const wait = new FairWait(host, 2_500, 1_000, undefined);
    const held = wait.run(100);
    for (let i = 0; i < 6; i++) {
      await settle();
      jest.advanceTimersByTime(500);
    }
    await settle();
    await expect(held).resolves.toBeNull();
    expect(store.attempts).toEqual([1_000, 2_000, 2_500]);
    expect(store.left()).toBe(1);
  });

  it('a failed subscription does not fail the wait: the attempts go on, and one gets the lock', async () => {
    const store = scripted([30_000, 30_000]);
    const host = { ...store.host, subscribe: () => Promise.resolve(false) };
    const held = new FairWait(host, 10_000, 1_000, undefined).run(100);
    for (let i = 0; i < 3; i++) {
      await settle();
      jest.advanceTimersByTime(1_000);
    }
    await settle();
    await expect(held).resolves.toBe(HOLD);
    expect(store.attempts).toEqual([0, 1_000, 2_000]);
  });

  it('comes back at once when told, and leaves the queue when its wait is over', async () => {
    const store = scripted([30_000, 30_000, 30_000, 30_000]);
    const wait = new FairWait(store.host, 1_500, 1_000, undefined);
    const held = wait.run(100);
    await settle();
    jest.advanceTimersByTime(200);
    wait.notice(); // a release: its own channel, or the plain lock's
    await settle();
    expect(store.attempts).toEqual([0, 200]);
    jest.advanceTimersByTime(1_000);
    await settle();
    jest.advanceTimersByTime(300);
    await settle();
    await expect(held).resolves.toBeNull();
    expect(store.attempts).toEqual([0, 200, 1_200, 1_500]);
    expect(store.left()).toBe(1);
  });
});
