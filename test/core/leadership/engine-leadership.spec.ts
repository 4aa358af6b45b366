import { LockEngine } from '../../../lib/core/lock-engine';
import { LockKeyError, LockLostError, LockOptionsError } from '../../../lib/errors';
import { observerOf, testEngine } from '../engine-kit';
import { FakeStore } from '../fake-store';
import { until } from '../../../tools/time';

const LEASE = 300;

function engineOn(store: FakeStore) {
  const logger = { warn: jest.fn((_m: string) => undefined), debug: jest.fn() };
  const lost = jest.fn((_e: LockLostError) => undefined);
  const engine = testEngine(store, {
    leaseTime: LEASE,
    waitTime: 1_000,
    logger,
    observer: observerOf({ lost }),
  });
  return { engine, logger, lost };
}

describe('LockEngine.leadership (fake store)', () => {
  let store: FakeStore;
  let engine: LockEngine;
  let logger: { warn: jest.Mock };
  let lost: jest.Mock;

  beforeEach(() => {
    store = new FakeStore();
    ({ engine, logger, lost } = engineOn(store));
  });
  afterEach(() => engine.close());

  it('campaigns on a fenced plain lock of the name, renewed by a watchdog of its own lease', async () => {
    const renew = jest.spyOn(store, 'renew');
    const campaign = engine.leadership('jobs', { leaseTime: 90 });
    campaign.start();
    await campaign.whenLeader();
    expect(campaign.term).toEqual(expect.any(Number)); // fencing on by default
    expect(store.holder('p:jobs')).toBeDefined();
    await until(() => renew.mock.calls.length >= 3, 1_000);
    expect(renew.mock.calls.every(([, lease]) => lease === 90)).toBe(true);
    expect(campaign.isLeader).toBe(true);
    await campaign.close();
    expect(store.holder('p:jobs')).toBeUndefined();
    expect(engine.heldCount).toBe(0);
  });

  it('resign and close end the term quietly: its signal aborts, no loss is reported or logged', async () => {
    const campaign = engine.leadership('quiet');
    campaign.start();
    await campaign.whenLeader();
    const { signal } = campaign;
    await campaign.resign();
    expect(signal.reason).toBeInstanceOf(LockLostError);
    expect(store.holder('p:quiet')).toBeUndefined();
    await campaign.whenLeader(); // alone: elected again after standing down
    await campaign.close();
    expect(lost).not.toHaveBeenCalled();
    expect(logger.warn).not.toHaveBeenCalled();
  });

  it("a lock deleted behind the leader's back is a loss, reported as for any lock; the campaign wins again", async () => {
    const campaign = engine.leadership('deleted');
    campaign.start();
    await campaign.whenLeader();
    const { signal, term } = campaign;
    store.vanish('p:deleted');
    await until(() => signal.aborted, LEASE * 2);
    expect(lost).toHaveBeenCalledTimes(1);
    await until(() => campaign.isLeader, LEASE * 2);
    expect(campaign.term).toBeGreaterThan(term!);
    await campaign.close();
  });

  it("engine.close() ends the campaigns: the leader's term ends, a waiting one stops", async () => {
    const leading = engine.leadership('end');
    leading.start();
    await leading.whenLeader();
    const waiting = engine.leadership('end');
    waiting.start();
    await engine.close(0);
    await until(() => leading.closed && waiting.closed, 2_000);
    expect(leading.isLeader).toBe(false);
    expect(store.holder('p:end')).toBeUndefined();
  });

  it('checks the name and options at once', () => {
    expect(() => engine.leadership('')).toThrow(LockKeyError);
    expect(() => engine.leadership(['a', 'b'] as unknown as string)).toThrow(LockKeyError);
    expect(() => engine.leadership('x', { leaseTime: 10 })).toThrow(LockOptionsError);
    expect(() => engine.leadership('x', { fencing: 'yes' as never })).toThrow(LockOptionsError);
  });
});
