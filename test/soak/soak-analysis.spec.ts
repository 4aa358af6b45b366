import { checkExclusion, checkFencing, checkWaits } from './soak-analysis';
import { WAIT, type SectionRecord } from './soak-records';

/** A section of key 0: called at `call`, inside from `enter` to `exit`, told at `told` (0: never). */
const section = (
  call: number,
  enter: number,
  exit: number,
  token: number,
  told = 0,
  accepted: [number, number] = [1, 1],
): SectionRecord => [0, call, enter, exit, told, token, ...accepted, enter + 1, exit - 1];

describe('soak analysis: the detectors flag what they must, and only that', () => {
  it('an owner entering while another believed it held the lock is a violation', () => {
    const sections = [section(0, 10, 100, 1), section(5, 50, 150, 2)];
    expect(checkExclusion(sections, []).violations).toBe(1);
  });

  it('an owner entering after the first was told of its loss is not', () => {
    const sections = [section(0, 10, 100, 1, 40), section(5, 50, 150, 2)];
    expect(checkExclusion(sections, [])).toMatchObject({ violations: 0, overlapsAfterWipe: 0 });
  });

  it('an overlap with a Redis restart between the two entries is counted apart', () => {
    const sections = [section(0, 10, 100, 1), section(5, 50, 150, 2)];
    expect(checkExclusion(sections, [30])).toMatchObject({ violations: 0, overlapsAfterWipe: 1 });
  });

  it('a token not above one granted before is stale; the store accepting it is counted too', () => {
    const inOrder = [section(0, 10, 20, 5), section(15, 30, 40, 6)];
    expect(checkFencing(inOrder)).toEqual({ staleTokens: 0, staleAccepted: 0, refused: 0 });
    const inverted = [section(0, 10, 20, 5), section(15, 30, 40, 4)];
    expect(checkFencing(inverted)).toMatchObject({ staleTokens: 1, staleAccepted: 2 });
    const refused = [section(0, 10, 20, 5), section(15, 30, 40, 4, 0, [0, 0])];
    expect(checkFencing(refused)).toMatchObject({ staleAccepted: 0, refused: 2 });
  });

  it('a wait spanning a free stretch is stuck, unless a fault or a section explains it', () => {
    const free: [number, number, number][] = [[0, 1_000, 4_000]];
    const timedOut: [number, number, number, 0 | 1 | 2][] = [[0, 500, 2_500, WAIT.timedOut]];
    const granted: [number, number, number, 0 | 1 | 2][] = [[0, 500, 2_500, WAIT.granted]];
    expect(checkWaits(timedOut, [], free, [], 1_000, 500)).toMatchObject({ stuckTimeouts: 1 });
    expect(checkWaits(granted, [], free, [], 1_000, 500)).toMatchObject({ lateGrants: 1 });
    const fault = { kind: 'pause' as const, start: 1_500, end: 1_600 };
    expect(checkWaits(timedOut, [], free, [fault], 1_000, 500)).toMatchObject({ stuckTimeouts: 0 });
    const busy = [section(1_600, 1_700, 1_900, 1)];
    expect(checkWaits(timedOut, busy, free, [], 1_000, 500)).toMatchObject({ stuckTimeouts: 0 });
    const short: [number, number, number, 0 | 1 | 2][] = [[0, 500, 1_800, WAIT.timedOut]];
    expect(checkWaits(short, [], free, [], 1_000, 500)).toMatchObject({ stuckTimeouts: 0 });
  });
});
