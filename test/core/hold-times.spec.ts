import { HoldTimes } from '../../lib/core/hold-times';

// The estimate behind a busy caller's retryAfter: recent hold times, per key and over all keys.
describe('HoldTimes', () => {
  it('knows nothing before a release, then follows recent holds of the key', () => {
    const times = new HoldTimes();
    expect(times.typical('a')).toBeUndefined();
    times.record('a', 50);
    expect(times.typical('a')).toBe(50);
    for (let i = 0; i < 30; i++) times.record('a', 2_000);
    expect(times.typical('a')).toBeGreaterThan(1_950); // the old 50 ms weighs nothing after 30
    expect(times.typical('a')).toBeLessThanOrEqual(2_000);
  });

  it('uses the average over every key for a key never released here', () => {
    const times = new HoldTimes();
    times.record('a', 100);
    times.record('b', 100);
    expect(times.typical('never')).toBe(100);
    expect(times.typical('a')).toBe(100);
  });

  it('keeps at most 1 000 keys, forgetting the least recently released', () => {
    const times = new HoldTimes();
    times.record('first', 10);
    for (let i = 0; i < 999; i++) times.record(`k${i}`, 1_000);
    times.record('first', 10); // released again: now the most recent
    times.record('one-more', 1_000); // evicts k0, the least recently released
    expect(times.typical('first')).toBe(10);
    expect(times.typical('k0')).toBe(times.typical('never')); // fell back to the overall average
    expect(times.typical('k1')).toBe(1_000);
  });

  it('records releases seen by the observer it wraps, and forwards every call', () => {
    const times = new HoldTimes();
    const released = jest.fn();
    const observer = times.observing({
      acquired: jest.fn(),
      busy: jest.fn(),
      released,
      lost: jest.fn(),
      renewalFailed: jest.fn(),
    });
    observer.released('a', 40);
    expect(released).toHaveBeenCalledWith('a', 40);
    expect(times.typical('a')).toBe(40);
    times.observing(undefined).released('b', 80); // no observer: still recorded
    expect(times.typical('b')).toBe(80);
  });
});
