import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { join } from 'node:path';
import { CHILDREN_TIMEOUT } from './family-kit';

/** A child process running rw-fair-child.ts: send it commands, wait for its lines. */
export interface LockChild {
  readonly process: ChildProcessWithoutNullStreams;
  /** Every line it printed, in order. */
  readonly lines: string[];
  send(line: string): void;
  /** Resolves with the first line (past or future) matching `pattern`. */
  line(pattern: RegExp, timeout?: number): Promise<string>;
}

/** Children started by `startChild`, to be killed by `killChildren` (afterAll). */
const started: ChildProcessWithoutNullStreams[] = [];

/** Starts a child app on `url` under `prefix`; resolves once it is ready. */
export async function startChild(
  url: string,
  prefix: string,
  { leaseTime = 30_000, fairQueueTimeout = 5_000 } = {},
): Promise<LockChild> {
  const child = spawn(
    process.execPath,
    [
      '-r',
      'ts-node/register/transpile-only',
      join(__dirname, 'rw-fair-child.ts'),
      url,
      prefix,
      String(leaseTime),
      String(fairQueueTimeout),
    ],
    { stdio: ['pipe', 'pipe', 'pipe'] },
  );
  started.push(child);
  const lines: string[] = [];
  const watchers = new Set<() => void>();
  let rest = '';
  let errors = '';
  child.stderr.on('data', (data: Buffer) => (errors += data.toString()));
  child.stdout.on('data', (data: Buffer) => {
    rest += data.toString();
    const parts = rest.split('\n');
    rest = parts.pop()!;
    lines.push(...parts);
    for (const watch of watchers) watch();
  });
  const handle: LockChild = {
    process: child,
    lines,
    send: (line) => child.stdin.write(`${line}\n`),
    line: (pattern, timeout = 10_000) =>
      new Promise<string>((resolve, reject) => {
        const check = () => {
          const found = lines.find((line) => pattern.test(line));
          if (!found) return;
          done();
          resolve(found);
        };
        const exited = () => {
          done();
          reject(new Error(`child exited before ${pattern}: ${errors}`));
        };
        const timer = setTimeout(() => {
          done();
          reject(new Error(`no ${pattern} within ${timeout} ms: ${lines.join(' | ')} ${errors}`));
        }, timeout);
        const done = () => {
          clearTimeout(timer);
          watchers.delete(check);
          child.off('exit', exited);
        };
        watchers.add(check);
        child.once('exit', exited);
        check();
      }),
  };
  await handle.line(/^ready$/, CHILDREN_TIMEOUT);
  return handle;
}

/** Kills every child still running (by pid) and waits for their exits. */
export async function killChildren(): Promise<void> {
  await Promise.all(
    started.splice(0).map(
      (child) =>
        new Promise<void>((resolve) => {
          if (child.exitCode !== null || child.signalCode !== null) return resolve();
          child.once('exit', () => resolve());
          child.kill('SIGKILL');
        }),
    ),
  );
}
