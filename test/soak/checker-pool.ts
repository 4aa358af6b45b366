/**
 * The family checker's worker processes: spawns them from a transpiled build, reads their event
 * lines (checker-records.ts) into holds, waits and counters as they come, and replaces a worker
 * the fault injector kills (its open holds end at their last recorded act).
 */
import { spawn, type ChildProcessByStdio } from 'node:child_process';
import type { Readable, Writable } from 'node:stream';
import type { WorkerBuild } from '../../tools/transpile-worker';
import type { Hold, HoldMode, Wait, WaitEnd } from './checker-records';
import type { CheckerWorkerSettings } from './checker-worker';
import type { WorkerPool } from './checker-faults';

/** What the workers reported, all processes together. */
export interface PoolRecords {
  holds: Map<string, Hold>;
  waits: Wait[];
  unhandled: number;
  errors: number;
  samples: string[];
  /** Workers killed by the injector, and workers that exited otherwise than after `D`. */
  killed: number;
  crashed: number;
}

interface Worker {
  child: ChildProcessByStdio<Writable, Readable, null>;
  number: number;
  killed: boolean;
  done: Promise<void>;
}

const list = (text: string) => text.split(',').map(Number);

/** Workers of one phase: `start(n)` spawns n, `finish()` waits for all to end. */
export class CheckerPool implements WorkerPool {
  readonly records: PoolRecords = {
    holds: new Map(),
    waits: [],
    unhandled: 0,
    errors: 0,
    samples: [],
    killed: 0,
    crashed: 0,
  };
  private readonly workers = new Map<number, Worker>();
  private count = 0;

  constructor(
    private readonly build: WorkerBuild,
    private readonly settings: CheckerWorkerSettings,
  ) {}

  /** Spawns `n` workers; resolves when each is ready (its application booted). */
  async start(n: number): Promise<void> {
    await Promise.all(Array.from({ length: n }, () => this.spawn()));
  }

  /** Starts the first workers' loops, to end at `endAt` (Date.now() ms); later ones are told at spawn. */
  go(endAt: number): void {
    this.settings.endAt = endAt;
    for (const w of this.workers.values()) w.child.stdin.write(`${endAt}\n`);
  }

  live(): { pid: number; number: number }[] {
    return [...this.workers.values()]
      .filter((w) => !w.killed && w.child.exitCode === null)
      .map((w) => ({ pid: w.child.pid!, number: w.number }));
  }

  async replace(pid: number): Promise<void> {
    const worker = [...this.workers.values()].find((w) => w.child.pid === pid);
    if (!worker || worker.killed || Date.now() > this.settings.endAt - 1_000) return;
    worker.killed = true;
    this.records.killed++;
    worker.child.kill('SIGKILL');
    await this.spawn();
  }

  /**
   * Resolves when every worker (call it once no more are spawned) has ended, with how many had to be SIGKILLed because they were
   * still running `limit` ms after the call (a call or the shutdown hung).
   */
  async finish(limit: number): Promise<number> {
    let hung = 0;
    const timer = setTimeout(() => {
      for (const w of this.workers.values()) {
        if (w.child.exitCode !== null || w.killed) continue;
        hung++;
        w.killed = true;
        w.child.kill('SIGKILL');
      }
    }, limit);
    await Promise.all([...this.workers.values()].map((w) => w.done));
    clearTimeout(timer);
    return hung;
  }

  /** SIGKILLs every worker left (after a failure). */
  killAll(): void {
    for (const w of this.workers.values()) if (w.child.exitCode === null) w.child.kill('SIGKILL');
  }

  private spawn(): Promise<void> {
    const number = this.count++;
    const child = spawn(process.execPath, [this.build.entry, JSON.stringify(this.settings)], {
      stdio: ['pipe', 'pipe', 'inherit'],
      env: this.build.env,
    });
    let ready!: () => void;
    const started = new Promise<void>((resolve) => (ready = resolve));
    let buffer = '';
    let finished = false;
    child.stdout.on('data', (data: Buffer) => {
      buffer += data.toString();
      const lines = buffer.split('\n');
      buffer = lines.pop()!;
      for (const line of lines) {
        if (line === 'R') ready();
        else if (line === 'D') finished = true;
        else this.read(number, line);
      }
    });
    const done = new Promise<void>((resolve) =>
      child.on('close', () => {
        if (!finished && !worker.killed) {
          this.records.crashed++;
          this.note(`worker ${number} ended without finishing (exit ${child.exitCode})`);
        }
        ready(); // a worker that died before booting must not hold the start up
        resolve();
      }),
    );
    const worker: Worker = { child, number, killed: false, done };
    this.workers.set(number, worker);
    return started;
  }

  private note(text: string): void {
    if (this.records.samples.length < 12) this.records.samples.push(text);
  }

  /** Applies one event line of worker `number`. */
  private read(number: number, line: string): void {
    const [type, ...f] = line.split(' ');
    const hold = (sid: string) => this.records.holds.get(`${number}.${sid}`);
    switch (type) {
      case 'E':
        this.records.holds.set(`${number}.${f[0]}`, {
          id: `${number}.${f[0]}`,
          process: number,
          mode: f[1] as HoldMode,
          parent: f[2] === '-1' ? undefined : `${number}.${f[2]}`,
          enter: Number(f[3]),
          last: Number(f[3]),
          acts: [Number(f[3])],
          resources: list(f[4]),
          told: 0,
          exit: 0,
          outcome: 'open',
        });
        break;
      case 'B': {
        const h = hold(f[0]);
        if (h) {
          h.last = Math.max(h.last, Number(f[1]));
          h.acts.push(Number(f[1]));
        }
        break;
      }
      case 'T': {
        const h = hold(f[0]);
        if (h && h.told === 0) h.told = Number(f[1]);
        break;
      }
      case 'X': {
        const h = hold(f[0]);
        if (h) [h.exit, h.outcome] = [Number(f[1]), f[2] as Hold['outcome']];
        break;
      }
      case 'W':
        this.records.waits.push({
          process: number,
          start: Number(f[0]),
          end: Number(f[1]),
          outcome: f[2] as WaitEnd,
          resources: list(f[3]),
        });
        break;
      case 'U':
        this.records.unhandled++;
        this.note(`worker ${number}: unhandled rejection: ${f.join(' ')}`);
        break;
      case 'M':
        this.records.errors++;
        this.note(`worker ${number}: ${f.join(' ')}`);
        break;
      default:
        this.note(`worker ${number}: ${line}`);
    }
  }
}
