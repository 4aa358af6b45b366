import { HANDOFF_HOLD_BACK, ReleaseHoldBack } from '../../../lib/core/waiting/release-hold-back';

jest.mock('../../../lib/time/clock', () => ({ now: () => Date.now() }));

describe('ReleaseHoldBack', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it('holds back until its time, through the notices of this process’s own releases', () => {
    const holdBack = new ReleaseHoldBack();
    expect(holdBack.remaining()).toBeLessThanOrEqual(0);
    holdBack.releasing(true);
    holdBack.releasing(true);
    holdBack.hold(Date.now() + HANDOFF_HOLD_BACK);
    holdBack.noticed();
    holdBack.noticed();
    expect(holdBack.remaining()).toBe(HANDOFF_HOLD_BACK);
    jest.advanceTimersByTime(HANDOFF_HOLD_BACK);
    expect(holdBack.remaining()).toBeLessThanOrEqual(0);
  });

  it('ends at the first notice that is not of its own release', () => {
    const holdBack = new ReleaseHoldBack();
    holdBack.releasing(true);
    holdBack.hold(Date.now() + HANDOFF_HOLD_BACK);
    holdBack.noticed(); // its own
    expect(holdBack.remaining()).toBeGreaterThan(0);
    holdBack.noticed(); // another process released since
    expect(holdBack.remaining()).toBeLessThanOrEqual(0);
  });

  it('counts no notice as its own for a release sent unsubscribed, or after a reconnect', () => {
    const unsubscribed = new ReleaseHoldBack(Date.now() + HANDOFF_HOLD_BACK);
    unsubscribed.releasing(false);
    unsubscribed.noticed();
    expect(unsubscribed.remaining()).toBeLessThanOrEqual(0);
    const reconnected = new ReleaseHoldBack();
    reconnected.releasing(true);
    reconnected.hold(Date.now() + HANDOFF_HOLD_BACK);
    reconnected.reset(); // its own notice may have been lost in the break
    reconnected.noticed();
    expect(reconnected.remaining()).toBeLessThanOrEqual(0);
  });
});
