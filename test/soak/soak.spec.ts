import { runSoak, soakViolations } from './soak';

/** Sections each process completes at least (~200 in 3 s here when quiet; a loaded CI run, ~24). */
const MIN_SECTIONS = 30;

describe('soak (short): 4 processes × 2 workers on 2 locks', () => {
  it('keeps exclusion, fencing-token order and every update; no lock lost, no stuck waiter', async () => {
    const report = await runSoak({
      seconds: 3,
      processes: 4,
      workers: 2,
      keys: 2,
      minSections: MIN_SECTIONS,
    });
    expect(soakViolations(report)).toEqual([]);
    expect(report.violations).toBe(0);
    expect(report.staleTokens + report.staleAccepted).toBe(0);
    expect(report.unhandledRejections).toBe(0);
    expect(report.stuckTimeouts + report.lateGrants).toBe(0);
    // Every process got its sections through (a stuck or failing lock leaves it short).
    expect(report.perProcess.map((p) => p.sections >= MIN_SECTIONS)).toEqual([
      true,
      true,
      true,
      true,
    ]);
    expect(report.lostUpdates).toBe(0);
    expect(report.lostEvents).toBe(0);
  }, 120_000);

  it('control: the same sections without the lock are caught by the detectors', async () => {
    const report = await runSoak({ seconds: 1, processes: 2, workers: 2, keys: 1, unlocked: true });
    expect(soakViolations(report)).toEqual(
      expect.arrayContaining(['exclusion violations', 'lost updates']),
    );
  }, 60_000);
});
