/**
 * The family checker's verdicts, computed after the run from every hold, wait and fault
 * (checker-records.ts; one monotonic clock for every process).
 *
 * **Exclusion.** A holder acts at discrete moments; before each act it looks at its signal, and
 * it acts only when the signal has not aborted. A hold's *believed hold* runs from its first act
 * (`enter`) to its last act made with the signal not aborted (`last`). Two holds *conflict* when
 * their believed holds overlap on a resource and their modes exclude each other there: any hold
 * beside an exclusive one (a plain, multi, write or fair hold), a reader beside a writer, more
 * than the semaphore's permits at once. Holds of one call chain (a write and the read it was
 * downgraded to) never conflict. Every conflict is a **violation**, whoever entered first:
 *
 * - An earlier holder that was told of its loss (signal aborted) before the later one entered
 *   stopped acting then, so its believed hold ended before the overlap: no conflict, whatever
 *   Redis did. That is the promise "the holder is told before its code can act on it".
 * - A holder frozen past its lease (SIGSTOP, a blocked event loop) cannot be told while frozen,
 *   but it does not act either. When it thaws, the loss must be reported before its next act:
 *   if its code acts first, that act lies inside the later holder's hold and conflicts (but see
 *   thaw acts below); if the signal aborts first, its believed hold ended before it froze.
 *   "Told before the later one entered" is thus refined to "told before it next acted after the
 *   later one entered", the only form a frozen process can meet.
 * - A process killed (SIGKILL) acts no more: its holds end at their last recorded act.
 *
 * One act is beyond any lock's reach and is counted apart (`thawActs`): a process frozen past its
 * lease whose code's timer was due before the watchdog's runs that code first on thawing; the
 * watchdog's timer, due too, runs in the same turn of the event loop and tells the holder before
 * its next act. So a conflict is a thaw act when the earlier holder's process was stopped when
 * the later entered, acted exactly once after that (within `THAW_GRACE` of its SIGCONT), and was
 * told of the loss. A second act, or no report of the loss at all, is a violation. Only fencing
 * protects the resource from that one act, as with every lease-based lock. The same holds when
 * the thawed process is the one entering: frozen after its grant was handed to its code (in
 * time: the engine refuses a grant read past its hand-over time) and before its first act, it
 * enters once on thawing, after another took the lock its lease lost meanwhile, and is told.
 *
 * A conflict whose holds straddle a fault that may lose acknowledged writes (a master killed and
 * its replica promoted: replication is asynchronous) is counted apart (`afterWriteLoss`): Redis
 * forgot the lock, which the topology does not promise to prevent; the holder must still be
 * told within a lease, and fencing must refuse it.
 *
 * **Stuck waits.** A resource is *free* where the monitor found it free at every poll (no lock
 * key; fewer live permits than the semaphore's), minus every believed hold on it and every fault
 * from its start to `recovery(fault)` after its end (a paused Redis or a frozen fair waiter ahead
 * in the queue keeps a waiter out legitimately). A multi-lock's wait needs all its names free at once.
 * A wait that spans `window` (the fair queue timeout) of free time is **stuck**: it timed out
 * (`stuckTimeouts`) or was granted only afterwards (`lateGrants`).
 */
import {
  SEM,
  SEMAPHORE_PERMITS,
  type CheckerFault,
  type FreeStretch,
  type Hold,
  type Wait,
} from './checker-records';
import { subtract } from './soak-analysis';

/** What the exclusion check found. */
export interface ExclusionFindings {
  /** Holds that conflicted with another hold (each counted once per resource). */
  violations: number;
  /** Conflicts across a fault that may lose writes (counted apart, see the module comment). */
  afterWriteLoss: number;
  /** Conflicts that are a thawed holder's one act before it is told (see the module comment). */
  thawActs: number;
  /** Violations by the resource they happened on. */
  byResource: Record<number, number>;
  /** A few, for the report. */
  samples: string[];
}

/** How soon after its SIGCONT a thawed process's first act may come, µs. */
const THAW_GRACE = 250_000;

/** Whether `a`'s acts from `t` on are the one act of a thawed process (see the module comment). */
function thawAct(a: Hold, t: number, stops: CheckerFault[]): boolean {
  const after = a.acts.filter((act) => act >= t);
  if (after.length !== 1 || (a.told === 0 && a.outcome !== 'lost')) return false;
  return stops.some(
    (f) =>
      f.process === a.process && f.start < t && f.end <= after[0] && after[0] - f.end <= THAW_GRACE,
  );
}

const sameChain = (a: Hold, b: Hold) =>
  a.id === b.id || a.parent === b.id || b.parent === a.id || (!!a.parent && a.parent === b.parent);

const describeHold = (h: Hold) =>
  `${h.id} ${h.mode} [${h.enter}, ${h.last}] told ${h.told || '-'} exit ${h.exit || '-'} ${h.outcome}`;

/** Counts conflicting believed holds (see the module comment). */
export function checkExclusion(holds: Hold[], faults: CheckerFault[]): ExclusionFindings {
  const findings: ExclusionFindings = {
    violations: 0,
    afterWriteLoss: 0,
    thawActs: 0,
    byResource: {},
    samples: [],
  };
  const losses = faults.filter((f) => f.losesWrites);
  const stops = faults.filter((f) => f.kind === 'stop-worker');
  const resources = new Set(holds.flatMap((h) => h.resources));
  for (const resource of resources) {
    const on = holds
      .filter((h) => h.resources.includes(resource))
      .sort((a, b) => a.enter - b.enter);
    let active: Hold[] = [];
    for (const h of on) {
      active = active.filter((a) => a.last >= h.enter);
      const others = active.filter((a) => !sameChain(a, h));
      const conflicts = (among: Hold[]) =>
        resource === SEM
          ? among.length + 1 > SEMAPHORE_PERMITS
            ? among
            : []
          : among.filter((a) => a.mode === 'x' || h.mode === 'x');
      const conflicting = conflicts(others);
      active.push(h);
      if (conflicting.length === 0) continue;
      // The thawed holder may also be the one entering: frozen between the grant handed to its
      // code and its first act, it enters on thawing, after another took the lock it had lost.
      const thawed = (among: Hold[]) =>
        thawAct(h, h.enter, stops) ? [] : among.filter((a) => !thawAct(a, h.enter, stops));
      if (conflicts(thawed(others)).length === 0) {
        findings.thawActs++;
        continue;
      }
      const first = conflicting[0];
      const lost = losses.some((f) => f.start <= h.enter && f.end >= first.enter);
      if (lost) {
        findings.afterWriteLoss++;
        continue;
      }
      findings.violations++;
      findings.byResource[resource] = (findings.byResource[resource] ?? 0) + 1;
      if (findings.samples.length < 8) {
        const near = faults
          .filter((f) => f.end >= first.enter && f.start <= h.last)
          .map(
            (f) =>
              `${f.kind}${f.process === undefined ? '' : ` of ${f.process}`} [${f.start}, ${f.end}]`,
          );
        findings.samples.push(
          `resource ${resource}: ${describeHold(h)} entered while ${conflicting.map(describeHold).join('; ')}` +
            `; faults: ${near.join(', ') || 'none'}`,
        );
      }
    }
  }
  return findings;
}

/** What the stuck-wait check found. */
export interface WaitFindings {
  stuckTimeouts: number;
  lateGrants: number;
  /** Free windows at least `window` long that were examined. */
  freeWindows: number;
  /** Stuck waits by their resources ('0,2' for a multi-lock). */
  byResources: Record<string, number>;
  samples: string[];
}

/** Intersection of two sorted lists of disjoint intervals (one sweep over both). */
function intersect(a: [number, number][], b: [number, number][]): [number, number][] {
  const out: [number, number][] = [];
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    const from = Math.max(a[i][0], b[j][0]);
    const to = Math.min(a[i][1], b[j][1]);
    if (from < to) out.push([from, to]);
    if (a[i][1] < b[j][1]) i++;
    else j++;
  }
  return out;
}

/** The union of `intervals` as a sorted list of disjoint intervals. */
function union(intervals: [number, number][]): [number, number][] {
  const out: [number, number][] = [];
  for (const [a, b] of [...intervals].sort((x, y) => x[0] - y[0])) {
    const last = out[out.length - 1];
    if (last !== undefined && a <= last[1]) last[1] = Math.max(last[1], b);
    else out.push([a, b]);
  }
  return out;
}

/** The index of the first of `sorted` (disjoint, sorted) that ends after `t`. */
function firstEndingAfter(sorted: [number, number][], t: number): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (sorted[mid][1] <= t) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** `[from, to)` minus the union `cuts` (disjoint, sorted). */
function subtractUnion(from: number, to: number, cuts: [number, number][]): [number, number][] {
  const near: [number, number][] = [];
  for (let i = firstEndingAfter(cuts, from); i < cuts.length && cuts[i][0] < to; i++) {
    near.push(cuts[i]);
  }
  return subtract(from, to, near);
}

/** Flags waits that spanned `window` µs of free resource (see the module comment). */
export function checkWaits(
  waits: Wait[],
  holds: Hold[],
  free: FreeStretch[],
  faults: CheckerFault[],
  window: number,
  recovery: (fault: CheckerFault) => number,
): WaitFindings {
  const findings: WaitFindings = {
    stuckTimeouts: 0,
    lateGrants: 0,
    freeWindows: 0,
    byResources: {},
    samples: [],
  };
  const faultCuts = faults.map((f): [number, number] => [f.start, f.end + recovery(f)]);
  const cutsOf = new Map<number, [number, number][]>();
  const freeOf = new Map<number, [number, number][]>();
  for (const [resource, from, to] of free) {
    let cuts = cutsOf.get(resource);
    if (cuts === undefined) {
      const held = holds
        .filter((h) => h.resources.includes(resource))
        .map((h): [number, number] => [h.enter, Math.max(h.last, h.exit)]);
      cuts = union([...faultCuts, ...held]);
      cutsOf.set(resource, cuts);
    }
    const pieces = subtractUnion(from, to, cuts);
    freeOf.set(resource, [...(freeOf.get(resource) ?? []), ...pieces]);
  }
  for (const [resource, pieces] of freeOf) freeOf.set(resource, union(pieces));
  // The free windows of each set of resources waited for, computed once per set.
  const windowsOf = new Map<string, [number, number][]>();
  const windowsFor = (resources: number[]) => {
    const on = resources.join(',');
    let windows = windowsOf.get(on);
    if (windows === undefined) {
      windows = resources
        .map((r) => freeOf.get(r) ?? [])
        .reduce((acc, next) => intersect(acc, next))
        .filter(([a, b]) => b - a >= window);
      windowsOf.set(on, windows);
    }
    return windows;
  };
  for (const wait of waits) {
    if (wait.outcome === 'f') continue;
    const windows = windowsFor(wait.resources);
    let spanned: [number, number] | undefined;
    for (let i = firstEndingAfter(windows, wait.start); i < windows.length; i++) {
      const [a, b] = windows[i];
      if (a >= wait.end) break;
      if (Math.min(wait.end, b) - Math.max(wait.start, a) >= window) {
        spanned = windows[i];
        break;
      }
    }
    if (!spanned) continue;
    if (wait.outcome === 't') findings.stuckTimeouts++;
    else findings.lateGrants++;
    const on = wait.resources.join(',');
    findings.byResources[on] = (findings.byResources[on] ?? 0) + 1;
    if (findings.samples.length < 8) {
      const before = faults.filter((f) => f.end <= spanned[0]).sort((a, b) => b.end - a.end)[0];
      findings.samples.push(
        `process ${wait.process} on ${wait.resources.join(',')}: wait [${wait.start}, ${wait.end}] ` +
          `${wait.outcome === 't' ? 'timed out' : 'granted late'}, free [${spanned[0]}, ${spanned[1]}]` +
          (before
            ? `; last fault before: ${before.kind}, ended ${spanned[0] - before.end} µs before`
            : ''),
      );
    }
  }
  findings.freeWindows = [...windowsOf.values()].reduce((sum, w) => sum + w.length, 0);
  return findings;
}

/**
 * Keys without a TTL left at the end, except what is kept on purpose: fencing counters, and the
 * semaphore's permit count `N` and permit set `{N}:timeout` (a Redisson permit may outlive any TTL
 * set on them: docs/multi-lock-and-semaphore.md) while the set holds no more than `permits`
 * entries.
 */
export function leftoverKeys(
  keys: { key: string; pttl: number; size: number }[],
  semaphore: string,
  permits: number,
): string[] {
  const kept = (key: string, size: number) =>
    key.startsWith('redisson_lock_token:') ||
    key === semaphore ||
    (key === `{${semaphore}}:timeout` && size <= permits);
  return keys
    .filter(({ key, pttl, size }) => pttl === -1 && !kept(key, size))
    .map(({ key }) => key);
}
