import { runSoak, soakPassed } from './soak';

describe('soak (short): 4 processes × 2 workers on one lock', () => {
  it('keeps exclusion, fencing-token order and every update', async () => {
    const report = await runSoak({ seconds: 4, processes: 4, workers: 2 });
    expect(report.sections).toBeGreaterThan(50);
    expect(report.counter).toBe(report.sections);
    expect({ ...report, perProcess: undefined }).toMatchObject({
      violations: 0,
      staleTokens: 0,
      nonMonotonic: 0,
      lostUpdates: 0,
      errors: 0,
    });
    expect(soakPassed(report)).toBe(true);
  }, 90_000);
});
