import { runSoak, soakViolations } from './soak';

describe('soak (short): 4 processes × 2 workers on one lock for 5 s', () => {
  it('keeps exclusion, fencing-token order and every update; no lock lost', async () => {
    const report = await runSoak({ seconds: 5, processes: 4, workers: 2 });
    expect(soakViolations(report)).toEqual([]);
    expect(report.sections).toBeGreaterThan(100);
    expect(report.counter).toBe(report.sections);
    expect(report.perProcess.every((p) => p.sections > 0)).toBe(true);
    expect(report.lostLocks).toBe(0);
  }, 120_000);

  it('control: the same sections without the lock are caught by the detectors', async () => {
    const report = await runSoak({ seconds: 2, processes: 2, workers: 2, unlocked: true });
    expect(soakViolations(report)).toEqual(
      expect.arrayContaining(['exclusion violations', 'lost updates']),
    );
  }, 120_000);
});
