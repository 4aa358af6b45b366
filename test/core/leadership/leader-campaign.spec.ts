import {
  LeaderCampaign,
  MAX_STAND_DOWN,
  type CampaignDriver,
  type LeaderChange,
} from '../../../lib/core/leadership/leader-campaign';
import type { LockHandle } from '../../../lib/core/lock-handle';
import { LockError, LockLostError, LockRedisError } from '../../../lib/errors';
import { checkedOnRead } from '../../../lib/time/deadline-signal';
import { Deferred } from '../engine-kit';

const LEASE = 900;

/** A leader lock's handle: its signal aborts when ended, or on the first read past `deadline`. */
function fakeHandle(token: number, deadline = Infinity) {
  const controller = new AbortController();
  let lost = false;
  const lose = (reason: string) => {
    lost = true;
    controller.abort(new LockLostError('k', reason));
  };
  checkedOnRead(controller.signal, () => {
    if (!lost && Date.now() >= handle.deadline) lose('deadline passed');
  });
  const handle = {
    deadline,
    lose,
    released: 0,
    signal: controller.signal,
    fencingToken: token,
    release: jest.fn(() => {
      handle.released++;
      return Promise.resolve();
    }),
  };
  return handle;
}
type FakeHandle = ReturnType<typeof fakeHandle>;

/** A driver whose every take() waits for the test to grant or fail it. */
function fakeDriver() {
  const takes: { deferred: Deferred<LockHandle>; signal: AbortSignal }[] = [];
  const driver = {
    key: 'k',
    leaseTime: LEASE,
    logger: { warn: jest.fn((_m: string) => undefined), debug: jest.fn((_m: string) => undefined) },
    take: jest.fn((signal: AbortSignal) => {
      const deferred = new Deferred<LockHandle>();
      signal.addEventListener('abort', () => deferred.reject(signal.reason), { once: true });
      takes.push({ deferred, signal });
      return deferred.promise;
    }),
    end: jest.fn((held: LockHandle, reason: string) =>
      (held as unknown as FakeHandle).lose(reason),
    ),
    stopped: jest.fn(() => false),
    outside: <T>(fn: () => T): T => fn(),
  } satisfies CampaignDriver;
  return { driver, takes };
}

/** Lets promise callbacks run (fake timers do not advance). */
const flush = () => jest.advanceTimersByTimeAsync(0);

describe('LeaderCampaign (fake driver, fake timers)', () => {
  let driver: ReturnType<typeof fakeDriver>['driver'];
  let takes: ReturnType<typeof fakeDriver>['takes'];
  let campaign: LeaderCampaign;
  let changes: LeaderChange[];

  beforeEach(() => {
    jest.useFakeTimers({ now: 1_000_000 });
    ({ driver, takes } = fakeDriver());
    campaign = new LeaderCampaign(driver);
    changes = [];
    campaign.onChange((change) => changes.push(change));
  });
  afterEach(async () => {
    await campaign.close();
    jest.useRealTimers();
  });

  /** Starts the campaign (if not yet) and grants its pending take a handle with `token`. */
  async function elect(token: number, deadline?: number): Promise<FakeHandle> {
    campaign.start();
    await flush();
    const handle = fakeHandle(token, deadline);
    takes.at(-1)!.deferred.resolve(handle as unknown as LockHandle);
    await flush();
    return handle;
  }

  it('does nothing until started; then leads with the granted lock: isLeader, term, signal, whenLeader, changes', async () => {
    await flush();
    expect(driver.take).not.toHaveBeenCalled();
    expect(campaign.isLeader).toBe(false);
    expect(campaign.term).toBeUndefined();
    expect(campaign.signal.aborted).toBe(true);
    const elected = campaign.whenLeader();
    const handle = await elect(7);
    await expect(elected).resolves.toBeUndefined();
    expect(campaign.isLeader).toBe(true);
    expect(campaign.term).toBe(7);
    expect(campaign.signal).toBe(handle.signal);
    expect(campaign.handle).toBe(handle);
    expect(changes).toEqual([{ leader: true, term: 7 }]);
  });

  it('a lost term is told and released, and the campaign goes on at once', async () => {
    const handle = await elect(1);
    handle.lose('renewal found no owner');
    expect(campaign.isLeader).toBe(false);
    expect(changes).toEqual([{ leader: true, term: 1 }, { leader: false }]);
    await flush();
    expect(handle.released).toBe(1);
    expect(driver.take).toHaveBeenCalledTimes(2);
  });

  it('isLeader checks the deadline on read: past it, the first read answers false and tells the listeners', async () => {
    const handle = await elect(3, Date.now() + LEASE);
    jest.setSystemTime(Date.now() + LEASE); // a stall: no timer ran
    expect(campaign.isLeader).toBe(false);
    expect(changes.at(-1)).toEqual({ leader: false });
    expect(handle.signal.reason).toBeInstanceOf(LockLostError);
    expect(campaign.term).toBeUndefined();
  });

  it('a grant already lost when it arrives is no term: released, and the campaign goes on', async () => {
    campaign.start();
    await flush();
    const handle = fakeHandle(4);
    handle.lose('lost on the way');
    takes[0].deferred.resolve(handle as unknown as LockHandle);
    await flush();
    expect(campaign.isLeader).toBe(false);
    expect(handle.released).toBe(1);
    expect(driver.take).toHaveBeenCalledTimes(2);
    expect(changes).toEqual([]);
  });

  it('resign(): ends the term (signal aborted), frees the lock, stands down a third of the lease, then campaigns again', async () => {
    const handle = await elect(1);
    await campaign.resign();
    expect(driver.end).toHaveBeenCalledWith(handle, 'this instance resigned the leadership');
    expect(handle.signal.aborted).toBe(true);
    expect(handle.released).toBe(1);
    expect(campaign.isLeader).toBe(false);
    await jest.advanceTimersByTimeAsync(LEASE / 3 - 1);
    expect(driver.take).toHaveBeenCalledTimes(1);
    await jest.advanceTimersByTimeAsync(1);
    expect(driver.take).toHaveBeenCalledTimes(2);
  });

  it('the stand-down is at most MAX_STAND_DOWN ms; resign() when not leading does nothing', async () => {
    ({ driver, takes } = fakeDriver());
    driver.leaseTime = 30_000;
    await campaign.close();
    campaign = new LeaderCampaign(driver);
    await campaign.resign();
    await elect(1);
    await campaign.resign();
    await jest.advanceTimersByTimeAsync(MAX_STAND_DOWN);
    expect(driver.take).toHaveBeenCalledTimes(2);
  });

  it('a failing campaign retries with a doubling delay up to the lease, warns once, never rejects', async () => {
    campaign.start();
    const failAt: number[] = [];
    for (let i = 0; i < 6; i++) {
      await flush();
      failAt.push(Date.now());
      takes.at(-1)!.deferred.reject(new LockRedisError('k', 'acquire', new Error('down')));
      await flush();
      await jest.advanceTimersByTimeAsync(LEASE);
    }
    const gaps = failAt.slice(1).map((at, i) => at - failAt[i]);
    expect(driver.take).toHaveBeenCalledTimes(7);
    expect(driver.logger.warn).toHaveBeenCalledTimes(1);
    expect(driver.logger.debug).toHaveBeenCalledTimes(5);
    expect(driver.logger.warn.mock.calls[0][0]).toMatch(/retrying in 100 ms/);
    expect(
      driver.logger.debug.mock.calls.map(([message]) => /in (\d+) ms/.exec(message)![1]),
    ).toEqual(['200', '400', '800', '900', '900']);
    expect(gaps.every((gap) => gap === LEASE)).toBe(true); // each step advanced a lease
    await elect(2);
    expect(campaign.isLeader).toBe(true);
  });

  it('ends itself when the engine shuts down (its attempt refused): no retry, whenLeader rejects', async () => {
    campaign.start();
    await flush();
    const waiting = campaign.whenLeader();
    driver.stopped.mockReturnValue(true);
    takes[0].deferred.reject(new LockError('The lock service is shutting down'));
    await expect(waiting).rejects.toThrow('was closed');
    expect(campaign.closed).toBe(true);
    await jest.advanceTimersByTimeAsync(LEASE * 3);
    expect(driver.take).toHaveBeenCalledTimes(1);
    expect(driver.logger.warn).not.toHaveBeenCalled();
  });

  it('close(): stops the waiting campaign (its take is aborted), rejects whenLeader, completes nothing twice', async () => {
    campaign.start();
    await flush();
    const waiting = campaign.whenLeader();
    await campaign.close();
    await expect(waiting).rejects.toBeInstanceOf(LockError);
    expect(takes[0].signal.aborted).toBe(true);
    await expect(campaign.whenLeader()).rejects.toThrow('was closed');
    campaign.start();
    await flush();
    expect(driver.take).toHaveBeenCalledTimes(1);
    await campaign.close();
  });

  it('close() while leading ends the term and frees the lock; a grant after close is freed at once', async () => {
    const handle = await elect(1);
    await campaign.close();
    expect(handle.signal.aborted).toBe(true);
    expect(handle.released).toBe(1);
    expect(changes).toEqual([{ leader: true, term: 1 }, { leader: false }]);
    // A grant answered as close() begins: never a term, freed at once.
    const late = new LeaderCampaign(driver);
    late.start();
    await flush();
    const granted = fakeHandle(2);
    takes.at(-1)!.deferred.resolve(granted as unknown as LockHandle);
    await late.close();
    expect(late.isLeader).toBe(false);
    expect(granted.signal.aborted).toBe(true);
    expect(granted.released).toBe(1);
  });

  it('a throwing listener is logged; the others are still told', async () => {
    const other: LeaderChange[] = [];
    campaign.onChange(() => {
      throw new Error('listener bug');
    });
    const unsubscribe = campaign.onChange((change) => other.push(change));
    await elect(1);
    expect(other).toEqual([{ leader: true, term: 1 }]);
    expect(driver.logger.warn).toHaveBeenCalledWith(expect.stringContaining('listener bug'));
    unsubscribe();
    await campaign.resign();
    expect(other).toHaveLength(1);
  });
});
