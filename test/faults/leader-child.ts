/**
 * Child process of leader-processes.spec.ts: one instance of an application that campaigns for
 * a leadership, with Nest's shutdown hooks (SIGTERM closes the app: the leader resigns).
 * argv: redisPort keyPrefix name leaseTime. Prints (times: Date.now()):
 *   `ready`                       campaigning
 *   `elected <term> <at>`         elected (changes$)
 *   `ended <at>`                  the term ended (changes$)
 *   `resumed <isLeader> <aborted> <term>`  the first read after a stall longer than the lease
 * stdin: `resign`, `close` (closes the app, then exits).
 */
import 'reflect-metadata';
import { createInterface } from 'node:readline';
import { childApp } from '../support/child-app';

async function main() {
  const [port, keyPrefix, name, leaseTime] = process.argv.slice(2);
  const lease = Number(leaseTime);
  const { app, locks } = await childApp({
    redis: { host: '127.0.0.1', port: Number(port), retryStrategy: () => 50, connectTimeout: 500 },
    keyPrefix,
    leaseTime: lease,
  });
  app.enableShutdownHooks();
  const print = (line: string) => process.stdout.write(`${line}\n`);
  const leadership = locks.leader(name);
  let leading = false;
  leadership.changes$.subscribe((change) => {
    if (change.leader) print(`elected ${change.term} ${Date.now()}`);
    else if (leading) print(`ended ${Date.now()}`);
    leading = change.leader;
  });
  // Reads the leadership every 20 ms, as a leader's loop would; a gap longer than the lease is a
  // stall (SIGSTOP): what the first read after it finds is printed.
  let last = performance.now();
  setInterval(() => {
    const now = performance.now();
    const stalled = now - last > lease;
    last = now;
    if (stalled) {
      const { isLeader, signal, term } = leadership;
      print(`resumed ${isLeader} ${signal.aborted} ${term}`);
    }
  }, 20);
  createInterface({ input: process.stdin }).on('line', (line) => {
    if (line === 'resign') void leadership.resign();
    if (line === 'close') void app.close().then(() => process.exit(0));
  });
  print('ready');
}

main().catch((error: unknown) => {
  process.stderr.write(`leader-child failed: ${String(error)}\n`);
  process.exit(1);
});
