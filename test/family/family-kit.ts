import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { join } from 'node:path';

/** A multi-sem-child.ts process; `printed` resolves with the first line matching a pattern. */
export class FamilyChild {
  readonly child: ChildProcessWithoutNullStreams;
  private output = '';
  private errors = '';

  constructor(url: string, prefix: string, args: string[]) {
    this.child = spawn(
      process.execPath,
      [
        '-r',
        'ts-node/register/transpile-only',
        join(__dirname, 'multi-sem-child.ts'),
        url,
        prefix,
        ...args,
      ],
      { stdio: ['pipe', 'pipe', 'pipe'] },
    );
    this.child.stdout.on('data', (data: Buffer) => (this.output += data.toString()));
    this.child.stderr.on('data', (data: Buffer) => (this.errors += data.toString()));
  }

  /** The first line matching `pattern`, once printed; rejects when the child exits first. */
  printed(pattern: RegExp): Promise<RegExpExecArray> {
    return new Promise((resolve, reject) => {
      const check = () => {
        const match = pattern.exec(this.output);
        if (!match) return false;
        this.child.stdout.off('data', check);
        this.child.off('exit', exited);
        resolve(match);
        return true;
      };
      const exited = (code: number | null) => {
        if (!check()) reject(new Error(`child exited (${code}): ${this.errors}`));
      };
      this.child.stdout.on('data', check);
      this.child.once('exit', exited);
      check();
    });
  }

  /** Starts the child's loop. */
  go(): void {
    this.child.stdin.write('go\n');
  }

  kill(): void {
    if (this.child.exitCode === null) this.child.kill('SIGKILL');
  }
}

/** Runs `count` children in `mode` for a common start; their `done <cycles> <violations>`. */
export async function runChildren(
  url: string,
  prefix: string,
  count: number,
  args: string[],
  children: FamilyChild[],
): Promise<{ cycles: number; violations: number }[]> {
  const started = Array.from({ length: count }, () => new FamilyChild(url, prefix, args));
  children.push(...started);
  await Promise.all(started.map((child) => child.printed(/^ready$/m)));
  for (const child of started) child.go();
  const done = await Promise.all(started.map((child) => child.printed(/^done (\d+) (\d+)$/m)));
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
