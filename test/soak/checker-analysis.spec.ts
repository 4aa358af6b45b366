import { checkExclusion, checkWaits, leftoverKeys } from './checker-analysis';
import { FAIR, RW, SEM, type CheckerFault, type Hold, type Wait } from './checker-records';

let next = 0;
/** A hold believed from `enter` to `last` (told at `told`, 0: never). */
const hold = (
  mode: Hold['mode'],
  resources: number[],
  enter: number,
  last: number,
  extra: Partial<Hold> = {},
): Hold => ({
  id: `0.${next++}`,
  process: 0,
  mode,
  resources,
  enter,
  last,
  told: 0,
  acts: [enter, last],
  exit: last + 1,
  outcome: 'ok',
  ...extra,
});
/** Process 7 frozen (SIGSTOP) from 20 to 300. */
const stop: CheckerFault = {
  kind: 'stop-worker',
  start: 20,
  end: 300,
  losesWrites: false,
  process: 7,
};
const wait = (resources: number[], start: number, end: number, outcome: Wait['outcome']): Wait => ({
  process: 1,
  resources,
  start,
  end,
  outcome,
});
const fault = (start: number, end: number, losesWrites = false): CheckerFault => ({
  kind: losesWrites ? 'kill-master' : 'client-pause',
  start,
  end,
  losesWrites,
});

describe('family checker analysis: conflicts, stuck waits, leftovers', () => {
  it('two exclusive holds that overlap are a violation; one after the other are not', () => {
    expect(checkExclusion([hold('x', [0], 10, 100), hold('x', [0], 50, 150)], [])).toMatchObject({
      violations: 1,
      byResource: { 0: 1 },
    });
    expect(checkExclusion([hold('x', [0], 10, 49), hold('x', [0], 50, 150)], []).violations).toBe(
      0,
    );
  });

  it('a multi-lock conflicts with a plain hold on any of its names, not on others', () => {
    const multi = hold('x', [0, 2], 10, 100);
    expect(checkExclusion([multi, hold('x', [2], 60, 70)], []).violations).toBe(1);
    expect(checkExclusion([multi, hold('x', [1], 60, 70)], []).violations).toBe(0);
  });

  it('an earlier holder told before the later entered stopped acting: no violation', () => {
    // Believed until its last act (40), told at 45, the run settled at 120: only [10, 40] counts.
    const told = hold('x', [FAIR], 10, 40, { told: 45, exit: 120, outcome: 'lost' });
    expect(checkExclusion([told, hold('x', [FAIR], 50, 150)], []).violations).toBe(0);
  });

  it('a holder frozen past its lease that acts after thawing, before being told, is a violation', () => {
    // Frozen from 20 to 300; the next holder entered at 100; the thawed holder acted at 310.
    const frozen = hold('x', [0], 10, 310, { told: 320, outcome: 'lost' });
    expect(checkExclusion([frozen, hold('x', [0], 100, 200)], []).violations).toBe(1);
    // Told at 305, before its next act: its believed hold ended at its last act before freezing.
    const toldFirst = hold('x', [0], 10, 20, { told: 305, outcome: 'lost' });
    expect(checkExclusion([toldFirst, hold('x', [0], 100, 200)], []).violations).toBe(0);
  });

  it('a thawed holder’s one act before it is told is counted apart; a second act is a violation', () => {
    const later = () => hold('x', [0], 100, 200);
    // Acted at 10 and 20, frozen until 300, acted once at 301, told at 302.
    const once = hold('x', [0], 10, 301, { process: 7, acts: [10, 20, 301], told: 302 });
    expect(checkExclusion([once, later()], [stop])).toMatchObject({ violations: 0, thawActs: 1 });
    const twice = hold('x', [0], 10, 305, { process: 7, acts: [10, 20, 301, 305], told: 306 });
    expect(checkExclusion([twice, later()], [stop])).toMatchObject({ violations: 1, thawActs: 0 });
    const neverTold = hold('x', [0], 10, 301, { process: 7, acts: [10, 20, 301] });
    expect(checkExclusion([neverTold, later()], [stop])).toMatchObject({ violations: 1 });
    const otherProcess = hold('x', [0], 10, 301, { process: 8, acts: [10, 20, 301], told: 302 });
    expect(checkExclusion([otherProcess, later()], [stop])).toMatchObject({ violations: 1 });
  });

  it('so is a thawed holder entering: frozen between its grant and its first act', () => {
    const other = () => hold('x', [0], 100, 400);
    // Granted before 20, frozen until 300, entered once at 301, told at 302.
    const once = hold('x', [0], 301, 301, { process: 7, acts: [301], told: 302, outcome: 'lost' });
    expect(checkExclusion([other(), once], [stop])).toMatchObject({ violations: 0, thawActs: 1 });
    const twice = hold('x', [0], 301, 305, { process: 7, acts: [301, 305], told: 306 });
    expect(checkExclusion([other(), twice], [stop])).toMatchObject({ violations: 1 });
    const neverTold = hold('x', [0], 301, 301, { process: 7, acts: [301] });
    expect(checkExclusion([other(), neverTold], [stop])).toMatchObject({ violations: 1 });
    const notFrozen = hold('x', [0], 301, 301, { process: 8, acts: [301], told: 302 });
    expect(checkExclusion([other(), notFrozen], [stop])).toMatchObject({ violations: 1 });
  });

  it('readers share; a reader beside a writer is a violation, the writer’s own downgrade is not', () => {
    const readers = [hold('r', [RW], 10, 100), hold('r', [RW], 20, 90)];
    expect(checkExclusion(readers, []).violations).toBe(0);
    expect(checkExclusion([...readers, hold('x', [RW], 50, 60)], []).violations).toBe(1);
    const write = hold('x', [RW], 200, 300);
    const downgrade = hold('r', [RW], 250, 400, { parent: write.id });
    expect(checkExclusion([write, downgrade], []).violations).toBe(0);
    expect(checkExclusion([write, downgrade, hold('x', [RW], 350, 360)], []).violations).toBe(1);
  });

  it('two permits of the semaphore at once are fine, a third is a violation', () => {
    const two = [hold('p', [SEM], 10, 100), hold('p', [SEM], 20, 100)];
    expect(checkExclusion(two, []).violations).toBe(0);
    expect(checkExclusion([...two, hold('p', [SEM], 30, 40)], []).violations).toBe(1);
    expect(checkExclusion([...two, hold('p', [SEM], 101, 140)], []).violations).toBe(0);
  });

  it('an overlap across a fault that loses writes is counted apart, not as a violation', () => {
    const holds = [hold('x', [0], 10, 100), hold('x', [0], 50, 150)];
    expect(checkExclusion(holds, [fault(20, 40, true)])).toMatchObject({
      violations: 0,
      afterWriteLoss: 1,
    });
    expect(checkExclusion(holds, [fault(20, 40)])).toMatchObject({
      violations: 1,
      afterWriteLoss: 0,
    });
  });

  it('a wait that times out over a free stretch is stuck, unless a fault or a hold explains it', () => {
    const free: [number, number, number][] = [[FAIR, 1_000, 4_000]];
    const timedOut = [wait([FAIR], 500, 2_500, 't')];
    expect(checkWaits(timedOut, [], free, [], 1_000, () => 500)).toMatchObject({
      stuckTimeouts: 1,
      byResources: { [FAIR]: 1 },
    });
    expect(
      checkWaits([wait([FAIR], 500, 2_500, 'g')], [], free, [], 1_000, () => 500),
    ).toMatchObject({
      lateGrants: 1,
    });
    const paused = [fault(1_500, 1_600)];
    expect(checkWaits(timedOut, [], free, paused, 1_000, () => 500).stuckTimeouts).toBe(0);
    // Each fault its own recovery: a killed worker's (its dead fair places) explains it here.
    const killed: CheckerFault = { ...fault(0, 100), kind: 'kill-worker', process: 3 };
    const recovery = (f: CheckerFault) => (f.process === undefined ? 200 : 3_000);
    expect(checkWaits(timedOut, [], free, [killed], 1_000, recovery).stuckTimeouts).toBe(0);
    expect(checkWaits(timedOut, [], free, [fault(0, 100)], 1_000, recovery).stuckTimeouts).toBe(1);
    const held = [hold('x', [FAIR], 1_700, 1_900)];
    expect(checkWaits(timedOut, held, free, [], 1_000, () => 500).stuckTimeouts).toBe(0);
    expect(
      checkWaits([wait([FAIR], 500, 1_800, 't')], [], free, [], 1_000, () => 500).stuckTimeouts,
    ).toBe(0);
    expect(
      checkWaits([wait([FAIR], 500, 2_500, 'f')], [], free, [], 1_000, () => 500).stuckTimeouts,
    ).toBe(0);
  });

  it('a multi-lock’s wait is stuck only while all its names were free at once', () => {
    const timedOut = [wait([0, 1], 0, 5_000, 't')];
    const apart: [number, number, number][] = [
      [0, 0, 2_000],
      [1, 1_500, 4_000],
    ];
    expect(checkWaits(timedOut, [], apart, [], 1_000, () => 0).stuckTimeouts).toBe(0);
    const together: [number, number, number][] = [
      [0, 0, 3_000],
      [1, 1_500, 4_000],
    ];
    expect(checkWaits(timedOut, [], together, [], 1_000, () => 0).stuckTimeouts).toBe(1);
  });

  it('keys without a TTL are left over, except fencing counters and a bounded semaphore', () => {
    const keys = [
      { key: 'p:L0', pttl: 900, size: 0 },
      { key: 'redisson_lock_queue:{p:fair}', pttl: -1, size: 0 },
      { key: 'redisson_lock_token:{p:L0}', pttl: -1, size: 0 },
      { key: 'p:sem', pttl: -1, size: 0 },
      { key: '{p:sem}:timeout', pttl: -1, size: 2 },
    ];
    expect(leftoverKeys(keys, 'p:sem', 2)).toEqual(['redisson_lock_queue:{p:fair}']);
    const grown = [{ key: '{p:sem}:timeout', pttl: -1, size: 3 }];
    expect(leftoverKeys(grown, 'p:sem', 2)).toEqual(['{p:sem}:timeout']);
  });
});
