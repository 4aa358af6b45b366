/**
 * Processes that hold locks for inspection tests: holder-child.ts, transpiled once per test file
 * (transpileWorker), each a RedisLockModule application of its own on a test's Redis.
 */
import { join } from 'node:path';
import { transpileWorker, type WorkerBuild } from '../../tools/transpile-worker';
import { ChildLines } from './child-processes';

let build: WorkerBuild | undefined;

/** A running holder-child: its process, client id and pid. */
export interface HolderProcess {
  readonly child: ChildLines;
  readonly clientId: string;
  readonly pid: number;
  /** Sends `line` (see holder-child.ts) and resolves once the child answered it. */
  send(line: string): Promise<void>;
}

/** Starts a holder-child on `url` under `prefix`, registered as `appName`, with `leaseTime`. */
export async function holderProcess(
  url: string,
  prefix: string,
  appName: string,
  leaseTime = 30_000,
): Promise<HolderProcess> {
  build ??= transpileWorker(join(__dirname, 'holder-child.ts'));
  const child = new ChildLines([build.entry, url, prefix, appName, String(leaseTime)], {
    env: build.env,
    lineTimeout: 20_000,
  });
  const [, clientId, pid] = await child.line(/^ready (\S+) (\d+)$/);
  return {
    child,
    clientId,
    pid: Number(pid),
    async send(line) {
      child.send(line);
      await child.line(new RegExp(`^(done|started) ${line}$`));
    },
  };
}

/** Removes the holders' build (call in afterAll, after killChildren()). */
export function removeHolderBuild(): void {
  build?.remove();
  build = undefined;
}
