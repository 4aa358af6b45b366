import { join } from 'node:path';
import { ChildLines } from '../support/child-processes';
import { CHILDREN_TIMEOUT } from './family-kit';

export { killChildren } from '../support/child-processes';

/** A child process running rw-fair-child.ts: send it commands, wait for its lines (10 s). */
export type LockChild = ChildLines;

/** Starts a child app on `url` under `prefix`; resolves once it is ready. */
export async function startChild(
  url: string,
  prefix: string,
  { leaseTime = 30_000, fairQueueTimeout = 5_000 } = {},
): Promise<LockChild> {
  const child = ChildLines.tsNode(
    join(__dirname, 'rw-fair-child.ts'),
    [url, prefix, String(leaseTime), String(fairQueueTimeout)],
    { lineTimeout: 10_000 },
  );
  await child.line(/^ready$/, CHILDREN_TIMEOUT);
  return child;
}
