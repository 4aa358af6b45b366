/**
 * What the lock-family rows (family.ts) measure and keep: their sizes and the records of every
 * repetition, which family-report.ts renders.
 */
import type { FairnessResult } from '../lib/fairness-loop';
import type { ReadHeavyResult } from '../lib/family-loops';

/** Sizes of the family rows (quick mode keeps the whole part near 20 s). */
export const FAMILY_CONFIG = {
  quick: { reps: 1, rwMs: 1_000, fairMs: 1_500, seq: 500, conc: 2_000, oppMs: 1_000, semMs: 1_000 },
  full: {
    reps: 4,
    rwMs: 3_000,
    fairMs: 5_000,
    seq: 2_000,
    conc: 10_000,
    oppMs: 5_000,
    semMs: 5_000,
  },
};
export type FamilyConfig = (typeof FAMILY_CONFIG)['full'];

export type Throughput = {
  cyclesPerSec: number;
  p50Us: number;
  p99Us: number;
  scriptCalls?: number;
};
export type SemaphoreRun = {
  sections: number;
  perWorker: number[];
  timeouts: number;
  violations: number;
  maxAtEntry: number;
  /** Sampled: holders inside their section (between INCR and DECR of the holders' counter). */
  meanInside: number;
  maxInside: number;
  /** Sampled: permits held (ZCARD of the permits' sorted set). */
  meanHeld: number;
  maxHeld: number;
  samples: number;
};

/** Everything measured, per variant: one entry per repetition. */
export interface FamilyRuns {
  config: FamilyConfig;
  readHeavy: Record<'readWrite' | 'plain', ReadHeavyResult[]>;
  /** With the script calls (acquire attempts and releases, every process) per section. */
  fair: Record<'fair' | 'plain', (FairnessResult & { scriptCallsPerSection: number })[]>;
  multi: Record<'multi' | 'nested', { sequential: Throughput[]; concurrent: Throughput[] }>;
  opposite: FairnessResult[];
  semaphore: SemaphoreRun[];
}
