import type { FairnessResult } from '../lib/fairness-loop';
import {
  FAIR_WORKERS,
  MULTI_CONCURRENCY,
  OPPOSITE_WORKERS,
  PERMITS,
  PROCESSES,
  RW_WORKERS,
  SEM_WORKERS,
} from '../lib/family-loops';
import type { FamilyRuns } from './family-runs';
import { fmt, median, table } from '../lib/stats';

const minMax = (perWorker: number[]) => Math.min(...perWorker) / Math.max(...perWorker);
const sum = (values: number[]) => values.reduce((s, v) => s + v, 0);
/** The median over repetitions of `a[rep] / b[rep]` (paired: same repetition, same noise). */
const paired = (a: number[], b: number[]) => median(a.map((value, rep) => value / b[rep]));

/** The fair and plain rows' figures, and whether the issue's targets are met. */
export function fairSummary(runs: FamilyRuns) {
  const seconds = runs.config.fairMs / 1000;
  const row = (reps: (FairnessResult & { scriptCallsPerSection: number })[]) => ({
    ownerChangesPerSec: median(reps.map((r) => r.ownerChanges / seconds)),
    sectionsPerSec: median(reps.map((r) => r.sections / seconds)),
    minMax: median(reps.map((r) => minMax(r.perWorker))),
    worstMinMax: Math.min(...reps.map((r) => minMax(r.perWorker))),
    timeouts: sum(reps.map((r) => r.timeouts)),
    violations: sum(reps.map((r) => r.violations)),
    handoffUs: median(reps.map((r) => r.handoffUs)),
    sectionUs: median(reps.map((r) => r.sectionUs)),
    scriptCallsPerSection: median(reps.map((r) => r.scriptCallsPerSection)),
  });
  const fair = row(runs.fair.fair);
  const plain = row(runs.fair.plain);
  const toPlain = paired(
    runs.fair.fair.map((r) => r.ownerChanges),
    runs.fair.plain.map((r) => r.ownerChanges),
  );
  return { fair, plain, toPlain, minMaxMet: fair.minMax >= 0.9, handoffsMet: toPlain >= 0.8 };
}

/** The markdown of scenario 9 (a-e). */
export function familyTables(runs: FamilyRuns): string {
  const { config } = runs;
  const out: string[] = [];
  const reps = `${config.reps} interleaved repetition${config.reps > 1 ? 's' : ''}, medians`;
  out.push(`### 9. Lock family (${reps})`, '');

  const rwSeconds = config.rwMs / 1000;
  const rwSections = (r: FamilyRuns['readHeavy']['plain'][number]) => r.reads + r.writes;
  out.push(
    `#### 9a. Read-heavy: 1 process × ${RW_WORKERS} workers, 90 % reads / 10 % writes on one name (${rwSeconds} s per run)`,
    '',
    table(
      [
        'lock',
        'reads/s',
        'writes/s',
        'sections/s',
        'to plain lock',
        'most readers at once',
        'worker min/max',
        'timeouts',
        'violations',
      ],
      (['readWrite', 'plain'] as const).map((variant) => {
        const rs = runs.readHeavy[variant];
        return [
          variant === 'readWrite' ? "read-write (mode: 'read' / 'write')" : 'plain lock',
          fmt(median(rs.map((r) => r.reads / rwSeconds))),
          fmt(median(rs.map((r) => r.writes / rwSeconds))),
          fmt(median(rs.map((r) => rwSections(r) / rwSeconds))),
          fmt(paired(rs.map(rwSections), runs.readHeavy.plain.map(rwSections)), 2),
          Math.max(...rs.map((r) => r.maxReaders)),
          fmt(median(rs.map((r) => minMax(r.perWorker))), 2),
          sum(rs.map((r) => r.timeouts)),
          sum(rs.map((r) => r.violations)),
        ];
      }),
    ),
    '',
  );

  const f = fairSummary(runs);
  out.push(
    `#### 9b. Fair lock: ${PROCESSES} processes × ${FAIR_WORKERS} workers on one key, GET then SET of a counter (${config.fairMs / 1000} s per run)`,
    '',
    table(
      [
        'lock',
        'owner changes/s',
        'sections/s',
        'to plain (owner changes)',
        'worker min/max (worst rep)',
        'timeouts',
        'violations',
        'handoff µs',
        'section µs',
        'script calls per section',
      ],
      [['fair: true', f.fair, f.toPlain] as const, ['plain lock', f.plain, 1] as const].map(
        ([name, r, ratio]) => [
          name,
          fmt(r.ownerChangesPerSec),
          fmt(r.sectionsPerSec),
          fmt(ratio, 2),
          `${fmt(r.minMax, 2)} (${fmt(r.worstMinMax, 2)})`,
          r.timeouts,
          r.violations,
          fmt(r.handoffUs),
          fmt(r.sectionUs),
          fmt(r.scriptCallsPerSection, 1),
        ],
      ),
    ),
    '',
    `Issue targets: fair min/max ≥ 0.9: ${fmt(f.fair.minMax, 2)}, ${f.minMaxMet ? 'met' : 'not met'}; fair owner changes/s ≥ 0.8 × plain: ${fmt(f.toPlain, 2)} ×, ${f.handoffsMet ? 'met' : 'not met'}.`,
    '',
  );

  const m = runs.multi;
  const throughputRow = (
    name: string,
    kind: 'sequential' | 'concurrent',
    variant: keyof typeof m,
  ) => [
    name,
    fmt(median(m[variant][kind].map((t) => t.cyclesPerSec))),
    fmt(
      paired(
        m[variant][kind].map((t) => t.cyclesPerSec),
        m.nested[kind].map((t) => t.cyclesPerSec),
      ),
      2,
    ),
    fmt(median(m[variant][kind].map((t) => t.p50Us))),
    fmt(median(m[variant][kind].map((t) => t.p99Us))),
    kind === 'sequential' ? fmt(median(m[variant][kind].map((t) => t.scriptCalls!)), 2) : '',
  ];
  out.push(
    `#### 9c. Uncontended 2-key multi-lock against two nested plain locks (a new key pair per cycle)`,
    '',
    table(
      ['shape', 'lock', 'cycles/s', 'to nested', 'p50 µs', 'p99 µs', 'script calls per cycle'],
      [
        [`sequential (${config.seq} cycles)`, 'run([a, b])', 'sequential', 'multi'],
        [`sequential (${config.seq} cycles)`, 'run(a, run(b))', 'sequential', 'nested'],
        [
          `${MULTI_CONCURRENCY} concurrent (${config.conc} cycles)`,
          'run([a, b])',
          'concurrent',
          'multi',
        ],
        [
          `${MULTI_CONCURRENCY} concurrent (${config.conc} cycles)`,
          'run(a, run(b))',
          'concurrent',
          'nested',
        ],
      ].map(([shape, name, kind, variant]) => [
        shape,
        ...throughputRow(name, kind as 'sequential', variant as 'multi'),
      ]),
    ),
    '',
  );

  const oppSeconds = config.oppMs / 1000;
  const o = runs.opposite;
  out.push(
    `#### 9d. Opposite orders: ${PROCESSES} processes × ${OPPOSITE_WORKERS} workers, half run([a, b]), half run([b, a]), GET then SET of a counter (${oppSeconds} s per run)`,
    '',
    table(
      [
        'owner changes/s',
        'sections/s',
        'worker min/max',
        'timeouts (wait 10 s)',
        'violations',
        'handoff µs',
      ],
      [
        [
          fmt(median(o.map((r) => r.ownerChanges / oppSeconds))),
          fmt(median(o.map((r) => r.sections / oppSeconds))),
          fmt(median(o.map((r) => minMax(r.perWorker))), 2),
          sum(o.map((r) => r.timeouts)),
          sum(o.map((r) => r.violations)),
          fmt(median(o.map((r) => r.handoffUs))),
        ],
      ],
    ),
    '',
  );

  const semSeconds = config.semMs / 1000;
  const s = runs.semaphore;
  out.push(
    `#### 9e. Semaphore of ${PERMITS} permits: ${PROCESSES} processes × ${SEM_WORKERS} workers (${semSeconds} s per run)`,
    '',
    table(
      [
        'sections/s',
        'permits held, sampled mean',
        'holders inside sections, sampled mean',
        'most held (sampled) / inside (sampled, at entry)',
        'worker min/max',
        'timeouts',
        'violations',
      ],
      [
        [
          fmt(median(s.map((r) => r.sections / semSeconds))),
          fmt(median(s.map((r) => r.meanHeld)), 2),
          fmt(median(s.map((r) => r.meanInside)), 2),
          `${Math.max(...s.map((r) => r.maxHeld))} / ${Math.max(...s.map((r) => r.maxInside))}, ${Math.max(...s.map((r) => r.maxAtEntry))}`,
          fmt(median(s.map((r) => minMax(r.perWorker))), 2),
          sum(s.map((r) => r.timeouts)),
          sum(s.map((r) => r.violations)),
        ],
      ],
    ),
    '',
  );
  return out.join('\n');
}
