/**
 * The soak's verdicts, computed after the run from every section's and wait's times (one
 * monotonic clock for all processes, see soak-records.ts). docs/reliability.md ("Soak") states
 * what each counter means and why each detector is sound.
 */
import {
  WAIT,
  type FaultRecord,
  type FreeRun,
  type SectionRecord,
  type WaitRecord,
} from './soak-records';

/** How the sections shared their locks. */
export interface ExclusionVerdict {
  /** Sections that entered while another section of the same key believed it held the lock (not told). */
  violations: number;
  /** Such overlaps with a Redis restart between the two entries: Redis had forgotten the lock. */
  overlapsAfterWipe: number;
  /** A few violating pairs, for the log. */
  samples: string[];
}

/** How fencing held up. */
export interface FencingVerdict {
  /** Sections whose token is not above the token of a section that had entered before their run() call. */
  staleTokens: number;
  /** Writes the store accepted with a token below one it had already accepted (a broken fence). */
  staleAccepted: number;
  /** Writes the store refused (a newer owner had written a higher token): the fence at work. */
  refused: number;
}

/** Waits that went on while the lock was free for a whole window. */
export interface StuckVerdict {
  /** Waits ended by their own timeout although the lock was free during it. */
  stuckTimeouts: number;
  /** Waits granted only after the lock had been free for the whole window. */
  lateGrants: number;
  /** Free windows (at least `window` long, away from faults and sections) that were checked. */
  freeWindows: number;
}

const by =
  <T>(f: (x: T) => number) =>
  (a: T, b: T) =>
    f(a) - f(b);
const ENTER = 2;
const TOKEN = 5;

/** The section's believed hold: from its entry to its last write, or to the moment it was told. */
const believedEnd = (s: SectionRecord) => (s[4] !== 0 ? Math.min(s[4], s[3]) : s[3]);

/** Groups records by their key (first field). */
function perKey<T extends [number, ...number[]]>(records: T[]): T[][] {
  const groups: T[][] = [];
  for (const r of records) (groups[r[0]] ??= []).push(r);
  return groups.filter((g) => g !== undefined);
}

/**
 * Sweeps each key's sections in entry order, keeping the one whose believed hold ends last: a
 * section entering before that end overlaps an owner that had not been told of a loss.
 */
export function checkExclusion(sections: SectionRecord[], wipes: number[]): ExclusionVerdict {
  const verdict: ExclusionVerdict = { violations: 0, overlapsAfterWipe: 0, samples: [] };
  for (const group of perKey(sections)) {
    group.sort(by((s) => s[ENTER]));
    let latest: SectionRecord | undefined;
    for (const s of group) {
      if (latest && believedEnd(latest) > s[ENTER]) {
        const wiped = wipes.some((w) => w >= latest![ENTER] && w <= s[ENTER]);
        if (wiped) verdict.overlapsAfterWipe++;
        else verdict.violations++;
        if (!wiped && verdict.samples.length < 5) {
          verdict.samples.push(
            `key ${s[0]}: token ${s[TOKEN]} entered ${believedEnd(latest) - s[ENTER]} µs before ` +
              `token ${latest[TOKEN]} ended or was told (told: ${latest[4] !== 0})`,
          );
        }
      }
      if (!latest || believedEnd(s) > believedEnd(latest)) latest = s;
    }
  }
  return verdict;
}

/** Index of the first element of sorted `times` that is >= `t`. */
function lowerBound(times: number[], t: number): number {
  let lo = 0;
  let hi = times.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (times[mid] < t) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** Highest token among events before `t`: events sorted by time, with a running maximum. */
function maxBefore(times: number[], runningMax: number[], t: number): number {
  const i = lowerBound(times, t);
  return i === 0 ? -Infinity : runningMax[i - 1];
}

function running(events: [time: number, token: number][]): [number[], number[]] {
  events.sort(by((e) => e[0]));
  let max = -Infinity;
  return [events.map((e) => e[0]), events.map((e) => (max = Math.max(max, e[1])))];
}

/**
 * Tokens must follow the order of the grants. A grant happens after its run() call and before
 * its section enters, so a section that entered before another's run() call was granted first
 * and must have the lower token. The store must never accept a token below one it accepted
 * before the write was sent.
 */
export function checkFencing(sections: SectionRecord[]): FencingVerdict {
  const verdict: FencingVerdict = { staleTokens: 0, staleAccepted: 0, refused: 0 };
  for (const group of perKey(sections)) {
    const [entered, enteredMax] = running(group.map((s) => [s[ENTER], s[TOKEN]]));
    const accepted: [number, number][] = [];
    for (const s of group) {
      if (s[6]) accepted.push([s[8], s[TOKEN]]);
      if (s[7]) accepted.push([s[3], s[TOKEN]]);
    }
    const [acceptedAt, acceptedMax] = running(accepted);
    for (const s of group) {
      if (maxBefore(entered, enteredMax, s[1]) >= s[TOKEN]) verdict.staleTokens++;
      // Accepted writes whose token is below one the store had accepted before they were sent.
      if (s[6] && maxBefore(acceptedAt, acceptedMax, s[ENTER]) > s[TOKEN]) verdict.staleAccepted++;
      if (s[7] && maxBefore(acceptedAt, acceptedMax, s[9]) > s[TOKEN]) verdict.staleAccepted++;
      verdict.refused += 2 - s[6] - s[7];
    }
  }
  return verdict;
}

/** [from, to] minus every interval of `cuts` (sorted by start), as a list of pieces. */
export function subtract(from: number, to: number, cuts: [number, number][]): [number, number][] {
  const pieces: [number, number][] = [];
  let start = from;
  for (const [a, b] of cuts) {
    if (b <= start || a >= to) continue;
    if (a > start) pieces.push([start, a]);
    start = Math.max(start, b);
  }
  if (start < to) pieces.push([start, to]);
  return pieces;
}

/**
 * A waiter is stuck when the lock stayed free for `window` µs while it waited. "Free" is
 * conservative: the monitor found no lock key at every poll, no section of that key ran, and no
 * fault was under way or had ended less than `recovery` µs before (a cut or paused Redis keeps a
 * waiter from a free lock legitimately). A wait that spans `window` µs of such a stretch is
 * stuck: it ended by its timeout (stuckTimeouts) or by a grant after it (lateGrants).
 */
export function checkWaits(
  waits: WaitRecord[],
  sections: SectionRecord[],
  freeRuns: FreeRun[],
  faults: FaultRecord[],
  window: number,
  recovery: number,
): StuckVerdict {
  const verdict: StuckVerdict = { stuckTimeouts: 0, lateGrants: 0, freeWindows: 0 };
  const faultCuts: [number, number][] = faults.map((f) => [f.start, f.end + recovery]);
  const byKey = new Map<number, [number, number][]>();
  for (const s of sections) {
    const list = byKey.get(s[0]) ?? [];
    list.push([s[ENTER], s[3]]);
    byKey.set(s[0], list);
  }
  const windows: [number, number, number][] = [];
  for (const [key, from, to] of freeRuns) {
    const cuts = [...faultCuts, ...(byKey.get(key) ?? [])].sort(by((c) => c[0]));
    for (const [a, b] of subtract(from, to, cuts)) if (b - a >= window) windows.push([key, a, b]);
  }
  verdict.freeWindows = windows.length;
  for (const [key, start, end, outcome] of waits) {
    if (outcome === WAIT.failed) continue;
    const covered = windows.some(
      ([k, a, b]) => k === key && Math.min(end, b) - Math.max(start, a) >= window,
    );
    if (!covered) continue;
    if (outcome === WAIT.timedOut) verdict.stuckTimeouts++;
    else verdict.lateGrants++;
  }
  return verdict;
}
