/** Percentile of an unsorted sample (nearest rank). */
export function percentile(values: number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
}

export const median = (values: number[]) => percentile(values, 50);

/** Formats a number for a table. */
export function fmt(value: number, digits = 0): string {
  if (!Number.isFinite(value)) return 'n/a';
  return value.toLocaleString('en-US', {
    maximumFractionDigits: digits,
    minimumFractionDigits: digits,
  });
}

/** A markdown table. */
export function table(header: string[], rows: (string | number)[][]): string {
  const lines = [`| ${header.join(' | ')} |`, `|${header.map(() => '---').join('|')}|`];
  for (const row of rows) lines.push(`| ${row.join(' | ')} |`);
  return lines.join('\n');
}

/** Nanosecond clock in microseconds. */
export const nowUs = () => Number(process.hrtime.bigint()) / 1e3;

/** A rate and the latency percentiles of the cycles that made it. */
export interface CycleRate {
  cyclesPerSec: number;
  p50Us: number;
  p99Us: number;
}

/** `n` cycles of `run` (given the cycle's index) shared by `workers` concurrent loops. */
export async function cycles(
  run: (i: number) => Promise<unknown>,
  n: number,
  workers: number,
): Promise<CycleRate> {
  const latencies: number[] = [];
  let next = 0;
  const started = nowUs();
  await Promise.all(
    Array.from({ length: workers }, async () => {
      for (let i = next++; i < n; i = next++) {
        const t = nowUs();
        await run(i);
        latencies.push(nowUs() - t);
      }
    }),
  );
  return {
    cyclesPerSec: n / ((nowUs() - started) / 1e6),
    p50Us: percentile(latencies, 50),
    p99Us: percentile(latencies, 99),
  };
}
