import { DeadlineTimer } from '../../lib/time/time-limit';

/** How far the engine's clock is ahead of the fake timers' (negative: a timer fires early). */
const mockClockSkew = { ms: 0 };
jest.mock('../../lib/time/clock', () => ({ now: () => Date.now() + mockClockSkew.ms }));

describe('DeadlineTimer', () => {
  let runs: number;
  let timer: DeadlineTimer;

  beforeEach(() => {
    jest.useFakeTimers();
    mockClockSkew.ms = 0;
    runs = 0;
    timer = new DeadlineTimer(() => runs++);
  });
  afterEach(() => {
    timer.cancel();
    jest.useRealTimers();
  });
  /** How many runs there were once the fake timers have moved `ms` further. */
  const runsAfter = (ms: number) => {
    jest.advanceTimersByTime(ms);
    return runs;
  };

  it('runs once its delay has passed', () => {
    timer.start(100);
    expect(runsAfter(99)).toBe(0);
    expect(runsAfter(1)).toBe(1);
    expect(runsAfter(1_000)).toBe(1);
  });

  it('waits for the rest when its timer fires before the clock says the delay has passed', () => {
    timer.start(100);
    mockClockSkew.ms = -30; // the timer fires when the clock has moved 70 ms
    expect(runsAfter(100)).toBe(0);
    expect(runsAfter(29)).toBe(0);
    expect(runsAfter(1)).toBe(1);
  });

  it('start() replaces the pending run, cancel() stops it', () => {
    timer.start(100);
    jest.advanceTimersByTime(50);
    timer.start(100);
    expect(runsAfter(99)).toBe(0);
    expect(runsAfter(1)).toBe(1);
    timer.start(100);
    timer.cancel();
    expect(runsAfter(1_000)).toBe(1);
  });
});
