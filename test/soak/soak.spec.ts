import { runSoak, soakViolations } from './soak';

describe('soak (short): 4 processes × 2 workers on 2 locks', () => {
  it('keeps exclusion, fencing-token order and every update; no lock lost, no stuck waiter', async () => {
    const report = await runSoak({ seconds: 3, processes: 4, workers: 2, keys: 2 });
    expect(soakViolations(report)).toEqual([]);
    expect(report.violations).toBe(0);
    expect(report.staleTokens + report.staleAccepted).toBe(0);
    expect(report.unhandledRejections).toBe(0);
    expect(report.stuckTimeouts + report.lateGrants).toBe(0);
    expect(report.sections).toBeGreaterThan(100);
    expect(report.lostUpdates).toBe(0);
    expect(report.perProcess.every((p) => p.sections > 0)).toBe(true);
    expect(report.lostEvents).toBe(0);
  }, 60_000);

  it('control: the same sections without the lock are caught by the detectors', async () => {
    const report = await runSoak({ seconds: 1, processes: 2, workers: 2, keys: 1, unlocked: true });
    expect(soakViolations(report)).toEqual(
      expect.arrayContaining(['exclusion violations', 'lost updates']),
    );
  }, 60_000);
});
