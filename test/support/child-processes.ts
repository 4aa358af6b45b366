/**
 * Child processes that tests talk to by lines: a worker or a second application, on ts-node or
 * on a transpiled build (tools/transpile-worker.ts). Every child started here is SIGKILLed by
 * killChildren(), which a suite calls after its tests.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';

/** Children started and not yet killed by killChildren(). */
const started = new Set<ChildProcessWithoutNullStreams>();

/** What to start: Node on `args`, optionally with its own environment and a default timeout. */
export interface ChildOptions {
  env?: NodeJS.ProcessEnv;
  /** Default timeout of line(), ms; none when omitted (the child's exit still rejects). */
  lineTimeout?: number;
}

/** A Node child process: send it lines, wait for the lines it prints (stdout), read its stderr. */
export class ChildLines {
  readonly process: ChildProcessWithoutNullStreams;
  /** Every complete line it printed, in order. */
  readonly lines: string[] = [];
  /** What it wrote to stderr. */
  errors = '';
  private rest = '';
  private readonly watchers = new Set<() => void>();
  private readonly lineTimeout: number | undefined;

  /** `node <args>`; see ChildLines.tsNode for a TypeScript file. */
  constructor(args: string[], options: ChildOptions = {}) {
    this.lineTimeout = options.lineTimeout;
    this.process = spawn(process.execPath, args, {
      stdio: ['pipe', 'pipe', 'pipe'],
      ...(options.env ? { env: options.env } : {}),
    });
    started.add(this.process);
    this.process.stderr.on('data', (data: Buffer) => (this.errors += data.toString()));
    this.process.stdout.on('data', (data: Buffer) => {
      this.rest += data.toString();
      const parts = this.rest.split('\n');
      this.rest = parts.pop()!;
      this.lines.push(...parts);
      for (const watch of this.watchers) watch();
    });
  }

  /** `script` (a .ts path) run through ts-node (transpile-only) with `args`. */
  static tsNode(script: string, args: string[], options?: ChildOptions): ChildLines {
    return new ChildLines(['-r', 'ts-node/register/transpile-only', script, ...args], options);
  }

  /** Writes `line` and a newline to its stdin. */
  send(line: string): void {
    this.process.stdin.write(`${line}\n`);
  }

  /**
   * The first line (past or future) matching `pattern`, as its match; rejects when the child
   * exits first or after `timeout` ms.
   */
  line(pattern: RegExp, timeout = this.lineTimeout): Promise<RegExpExecArray> {
    return new Promise((resolve, reject) => {
      const check = () => {
        for (const line of this.lines) {
          const match = pattern.exec(line);
          if (match) {
            done();
            resolve(match);
            return true;
          }
        }
        return false;
      };
      // 'close', not 'exit': the last lines may still be in the pipe when the process has exited.
      const exited = (code: number | null) => {
        if (check()) return;
        done();
        reject(new Error(`child exited (${code}) before ${pattern}: ${this.errors}`));
      };
      const timer =
        timeout === undefined
          ? undefined
          : setTimeout(() => {
              done();
              const said = `${this.lines.join(' | ')} ${this.errors}`;
              reject(new Error(`no ${pattern} within ${timeout} ms: ${said}`));
            }, timeout);
      const done = () => {
        clearTimeout(timer);
        this.watchers.delete(check);
        this.process.off('close', exited);
      };
      this.watchers.add(check);
      this.process.once('close', exited);
      check();
    });
  }

  /** SIGKILLs it unless it has exited. */
  kill(): void {
    if (this.process.exitCode === null && this.process.signalCode === null) {
      this.process.kill('SIGKILL');
    }
  }
}

/** SIGKILLs every child still running (by pid) and waits for their exits. */
export async function killChildren(): Promise<void> {
  const children = [...started];
  started.clear();
  await Promise.all(
    children.map(
      (child) =>
        new Promise<void>((resolve) => {
          if (child.exitCode !== null || child.signalCode !== null) return resolve();
          child.once('exit', () => resolve());
          child.kill('SIGKILL');
        }),
    ),
  );
}
