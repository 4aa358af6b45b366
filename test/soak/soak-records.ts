/**
 * What the soak's processes record and hand to its analysis. Every time is in microseconds on
 * CLOCK_MONOTONIC (`process.hrtime`), which Linux shares between all processes of a machine:
 * times from different workers and from the parent compare directly, and no wall-clock step
 * can reorder them.
 */

/** Now, in µs on the machine-wide monotonic clock. */
export const micros = (): number => Number(process.hrtime.bigint() / 1000n);

/**
 * One critical section (one outermost `run`): `[key, call, enter, exit, told, token, entryOk,
 * exitOk, entryDone, exitSent]`.
 * - `key`: index of the lock key; `call`: when `run` was called (every attempt is sent after it);
 * - `enter`: the section started (after the grant's reply); `exit`: its last write was answered;
 * - `told`: when its signal aborted (a lost lock reported), 0 if never;
 * - `token`: its fencing token; `entryOk`/`exitOk`: 1 when the fenced store accepted the write
 *   sent at entry / at exit, 0 when it refused it; `entryDone`: the entry write's answer came;
 *   `exitSent`: the exit write was sent.
 */
export type SectionRecord = [
  key: number,
  call: number,
  enter: number,
  exit: number,
  told: number,
  token: number,
  entryOk: number,
  exitOk: number,
  entryDone: number,
  exitSent: number,
];

/** How a wait (a `run` call that did not re-enter) ended: granted, timed out, failed. */
export const WAIT = {
  granted: 0,
  /** LockAcquireTimeoutError: its own waitTime ran out. */
  timedOut: 1,
  /** Any other error before the section started (LockRedisError while Redis was unreachable). */
  failed: 2,
} as const;
/** One of the WAIT outcomes. */
export type WaitOutcome = (typeof WAIT)[keyof typeof WAIT];

/** One wait: `[key, start, end, outcome]`. */
export type WaitRecord = [key: number, start: number, end: number, outcome: WaitOutcome];

/** A fault the parent injected, from its start to its end (Redis answering / proxy restored). */
export interface FaultRecord {
  kind: FaultKind;
  start: number;
  end: number;
}

/** The faults the soak injects. */
export const FAULT_KINDS = ['restart', 'pause', 'cut', 'stall'] as const;
/** One of FAULT_KINDS. */
export type FaultKind = (typeof FAULT_KINDS)[number];

/** A stretch in which the parent's monitor found the lock key absent at every poll: [from, to]. */
export type FreeRun = [key: number, from: number, to: number];

/** What one soak process reports at the end. */
export interface SoakWorkerReport {
  /** Critical sections that ran (each also in `records`). */
  sections: number;
  /** Sections that ended with their signal aborted: lost and told during the section. */
  lostTold: number;
  /** `run` calls rejected with LockLostError although the signal had not aborted by the section's end. */
  lostAtRelease: number;
  /** lockLost$ events. */
  lostEvents: number;
  /** Nested holds that saw another token than their outer hold. */
  nestedMismatch: number;
  /** `process.on('unhandledRejection')` events. */
  unhandledRejections: number;
  /** Errors other than a wait's timeout or failure and a reported loss. */
  errors: number;
  /** `run` calls that had not settled 30 s after the end (a hang). */
  hungCalls: number;
  /** Up to three error messages, for the log. */
  errorSamples: string[];
  records: SectionRecord[];
  waits: WaitRecord[];
}
