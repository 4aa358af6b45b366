import { join } from 'node:path';
import { ChildLines } from '../support/child-processes';

/** A multi-sem-child.ts process on `url` under `prefix`, given `args`. */
export const familyChild = (url: string, prefix: string, args: string[]): ChildLines =>
  ChildLines.tsNode(join(__dirname, 'multi-sem-child.ts'), [url, prefix, ...args]);

/** Runs `count` children in `mode` for a common start; their `done <cycles> <violations>`. */
export async function runChildren(
  url: string,
  prefix: string,
  count: number,
  args: string[],
): Promise<{ cycles: number; violations: number }[]> {
  const started = Array.from({ length: count }, () => familyChild(url, prefix, args));
  await Promise.all(started.map((child) => child.line(/^ready$/)));
  for (const child of started) child.send('go');
  const done = await Promise.all(started.map((child) => child.line(/^done (\d+) (\d+)$/)));
  return done.map(([, cycles, violations]) => ({
    cycles: Number(cycles),
    violations: Number(violations),
  }));
}

/**
 * Jest timeout of a test that starts child processes: each loads ts-node, Nest and the library,
 * which takes tens of seconds when the machine's cores are busy.
 */
export const CHILDREN_TIMEOUT = 120_000;

/** Resolves when `signal` aborts, with its reason. */
export const aborted = (signal: AbortSignal): Promise<unknown> =>
  new Promise<unknown>((resolve) => {
    if (signal.aborted) resolve(signal.reason);
    signal.addEventListener('abort', () => resolve(signal.reason));
  });
