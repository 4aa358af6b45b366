import { spawn } from 'node:child_process';
import { join } from 'node:path';

/**
 * Runs `count` bench worker processes (`script` in bench/workers/, through ts-node), each given the
 * arguments `argsOf(index)`. Every worker prints `ready` once loaded; then all get the same start
 * time on stdin, 200 ms ahead, so they begin together. Resolves each worker's JSON report (what
 * it printed after `ready`).
 */
export async function runWorkerProcesses<T>(
  script: string,
  count: number,
  argsOf: (index: number) => string[],
): Promise<T[]> {
  const ready: Promise<void>[] = [];
  const children = Array.from({ length: count }, (_, index) => {
    const child = spawn(
      process.execPath,
      [
        '-r',
        'ts-node/register/transpile-only',
        join(__dirname, '..', 'workers', script),
        ...argsOf(index),
      ],
      { stdio: ['pipe', 'pipe', 'inherit'] },
    );
    let output = '';
    ready.push(
      new Promise<void>((resolve) =>
        child.stdout.on('data', (chunk: Buffer) => {
          output += chunk.toString();
          if (output.startsWith('ready\n')) resolve();
        }),
      ),
    );
    const done = new Promise<T>((resolve, reject) =>
      child.on('exit', (code) =>
        code === 0
          ? resolve(JSON.parse(output.slice('ready\n'.length)) as T)
          : reject(new Error(`${script} exited ${code}`)),
      ),
    );
    return { child, done };
  });
  await Promise.all(ready);
  const startAt = Date.now() + 200;
  for (const { child } of children) child.stdin.end(`${startAt}\n`);
  return Promise.all(children.map((c) => c.done));
}
