import { spawn } from 'node:child_process';
import { join } from 'node:path';

/** How long the child may take to start (ts-node on a busy machine) and end, ms. */
const CHILD_TIMEOUT = 60_000;

describe('no ref’d timer in the library', () => {
  it(
    'a process that holds locks of every kind, with a caller waiting on each, exits once its own work is done',
    async () => {
      const child = spawn(
        process.execPath,
        ['-r', 'ts-node/register/transpile-only', join(__dirname, 'process-exit-child.ts')],
        { stdio: ['ignore', 'pipe', 'pipe'] },
      );
      let output = '';
      let errors = '';
      child.stdout.on('data', (data: Buffer) => {
        output += data.toString();
        // A ref'd timer keeps the child alive: no need to wait for the bound to say so.
        if (/timers: [1-9]/.test(output)) setTimeout(() => child.kill('SIGKILL'), 2_000);
      });
      child.stderr.on('data', (data: Buffer) => (errors += data.toString()));
      // A child kept alive by a timer would never exit: the bound kills it and fails the test.
      const bound = setTimeout(() => child.kill('SIGKILL'), CHILD_TIMEOUT - 5_000);
      const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve) =>
        child.once('exit', (exitCode, exitSignal) => resolve([exitCode, exitSignal])),
      );
      clearTimeout(bound);
      expect({ code, signal, errors }).toEqual({ code: 0, signal: null, errors: '' });
      expect(output).toBe("held, waiting; ref'd timers: 0\nexited\n");
    },
    CHILD_TIMEOUT,
  );
});
