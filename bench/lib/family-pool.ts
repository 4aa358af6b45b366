import { spawn, type ChildProcessByStdio } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import type { Readable, Writable } from 'node:stream';
import type { WorkerLog } from './fairness-loop';
import type { FamilyJobArgs } from './family-loops';

/**
 * `count` family-worker.ts processes kept up for every cross-process run of the family
 * scenarios (starting a Nest worker costs seconds of CPU on a loaded 2-core machine: once, not
 * per run). Each run sends every worker its job and one start time (default 200 ms ahead) as one JSON
 * line, and resolves every worker's WorkerLogs (one JSON line each), in worker order.
 */
export class FamilyPool {
  private constructor(
    private readonly children: ChildProcessByStdio<Writable, Readable, null>[],
    private readonly lines: AsyncIterator<string>[],
  ) {}

  static async start(count: number, port: number): Promise<FamilyPool> {
    const children = Array.from({ length: count }, () =>
      spawn(
        process.execPath,
        [
          '-r',
          'ts-node/register/transpile-only',
          join(__dirname, '..', 'workers', 'family-worker.ts'),
          String(port),
        ],
        { stdio: ['pipe', 'pipe', 'inherit'] },
      ),
    );
    const lines = children.map((child) =>
      createInterface({ input: child.stdout })[Symbol.asyncIterator](),
    );
    const pool = new FamilyPool(children, lines);
    await Promise.all(lines.map((_, i) => pool.next(i, 'ready')));
    return pool;
  }

  get size(): number {
    return this.children.length;
  }

  /** Runs `argsOf(index)` on every worker at once; each worker's logs, in worker order. */
  async run(
    argsOf: (index: number) => FamilyJobArgs,
    startAt = Date.now() + 200,
  ): Promise<WorkerLog[][]> {
    this.children.forEach((child, i) =>
      child.stdin.write(`${JSON.stringify({ startAt, args: argsOf(i) })}\n`),
    );
    const answers = await Promise.all(this.lines.map((_, i) => this.next(i)));
    return answers.map((line) => JSON.parse(line) as WorkerLog[]);
  }

  /** Ends every worker (end of stdin) and waits for them to exit. */
  async stop(): Promise<void> {
    await Promise.all(
      this.children.map(
        (child) =>
          new Promise<void>((resolve) => {
            if (child.exitCode !== null) return resolve();
            child.on('exit', () => resolve());
            child.stdin.end();
          }),
      ),
    );
  }

  private async next(index: number, expected?: string): Promise<string> {
    const { value, done } = await this.lines[index].next();
    if (done === true || (expected !== undefined && value !== expected)) {
      throw new Error(`family-worker ${index} ended or answered ${String(value)}`);
    }
    return value;
  }
}
