import './date-clock';
import { UNLOCK_LATCH_TTL } from '../../../lib/store';
import { UnlockLatches } from '../../../lib/stores/memory/unlock-latches';

describe('memory store unlock latches', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it('keeps each answer for the latch lifetime, then forgets it', () => {
    const latches = new UnlockLatches();
    latches.set('a', 2);
    latches.set('b', null);
    expect(latches.get('a')).toBe(2);
    expect(latches.get('b')).toBeNull();
    expect(latches.get('c')).toBeUndefined();
    jest.advanceTimersByTime(UNLOCK_LATCH_TTL - 1);
    latches.set('c', 0);
    expect(latches.get('a')).toBe(2);
    jest.advanceTimersByTime(1);
    expect(latches.get('a')).toBeUndefined();
    expect(latches.get('b')).toBeUndefined();
    expect(latches.get('c')).toBe(0);
  });

  it('expires in setting order across its queue compaction', () => {
    const latches = new UnlockLatches();
    for (let i = 0; i < 5_000; i++) {
      latches.set(`old${i}`, i);
      jest.advanceTimersByTime(1);
    }
    // Latches 0 to 2 999 have expired; the next set compacts the queue past them.
    jest.advanceTimersByTime(UNLOCK_LATCH_TTL - 5_000 + 2_999);
    latches.set('new', 1);
    expect(latches.get('old2999')).toBeUndefined();
    expect(latches.get('old3000')).toBe(3_000);
    expect(latches.get('old4999')).toBe(4_999);
    jest.advanceTimersByTime(2_000);
    expect(latches.get('old4999')).toBeUndefined();
    expect(latches.get('new')).toBe(1);
  });
});
