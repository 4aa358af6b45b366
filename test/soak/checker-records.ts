/**
 * What the family checker's workers (checker-worker.ts) tell the parent (checker.ts), one line
 * per event on stdout as it happens, so that the records of a worker killed with SIGKILL are
 * kept up to its death (a write to a pipe is synchronous on Linux). Times are µs on the
 * machine-wide monotonic clock (soak-records.ts `micros`), shared by every process.
 *
 *   E <sid> <mode> <parent sid or -1> <time> <resources>   a section entered (its first act)
 *   B <sid> <time>                                         it acted, its signal not aborted
 *   T <sid> <time>                                         its signal aborted (told of a loss)
 *   X <sid> <time> <ok|lost|err>                           its run/release settled
 *   W <start> <end> <g|t|f> <resources>                    a wait: granted, timed out, failed
 *   U <text>                                               an unhandled rejection
 *   M <text>                                               a section failed otherwise: why
 *   R / D                                                  ready / done (app closed)
 *
 * `<resources>` is a comma-separated list of resource numbers (see CHECKER_RESOURCES).
 */

/** A hold's mode on its resources: exclusive, shared with readers, one of a semaphore's permits. */
export type HoldMode = 'x' | 'r' | 'p';

/**
 * The checked resources, by number: three plain names (plain locks and multi-locks over them),
 * a read-write lock, a fair lock and a semaphore of `SEMAPHORE_PERMITS` permits.
 */
export const CHECKER_RESOURCES = ['L0', 'L1', 'L2', 'rw', 'fair', 'sem'] as const;
/** Resource numbers of the plain names. */
export const PLAIN = [0, 1, 2] as const;
/** Resource numbers of the other kinds. */
export const RW = 3;
export const FAIR = 4;
export const SEM = 5;
/** Permits of the semaphore. */
export const SEMAPHORE_PERMITS = 2;

/** One critical section, as the parent assembled it from a worker's lines. */
export interface Hold {
  /** `<process>.<sid>`: unique over the run. */
  id: string;
  /** The worker process (its number in the run, replacements get new numbers). */
  process: number;
  mode: HoldMode;
  resources: number[];
  /** The hold of the same call chain this one was taken in (a downgrade's write), if any. */
  parent?: string;
  /** Its first act (the section started, after the grant). */
  enter: number;
  /** Its last act while its signal had not aborted: the end of what its holder believed. */
  last: number;
  /** Every act's time, `enter` first. */
  acts: number[];
  /** When its signal aborted, 0 if never. */
  told: number;
  /** When its run()/release settled, 0 if never (the process died first). */
  exit: number;
  outcome: 'ok' | 'lost' | 'err' | 'open';
}

/** How a wait ended. */
export type WaitEnd = 'g' | 't' | 'f';

/** One wait (a call that was not a re-entry): on `resources`, from `start` to `end`. */
export interface Wait {
  process: number;
  resources: number[];
  start: number;
  end: number;
  outcome: WaitEnd;
}

/** The checker's fault kinds. */
export const CHECKER_FAULTS = [
  'stop-worker',
  'kill-worker',
  'client-pause',
  'restart',
  'failover',
  'kill-master',
] as const;
/** One of CHECKER_FAULTS. */
export type CheckerFaultKind = (typeof CHECKER_FAULTS)[number];

/** A fault from its start to its end (SIGCONT about to be sent, Redis answering again). */
export interface CheckerFault {
  kind: CheckerFaultKind;
  start: number;
  end: number;
  /** It may lose acknowledged writes (a killed master whose replica is promoted). */
  losesWrites: boolean;
  /** The worker process it stopped or killed. */
  process?: number;
}

/** A stretch in which the monitor found a resource free at every poll: [resource, from, to]. */
export type FreeStretch = [resource: number, from: number, to: number];
