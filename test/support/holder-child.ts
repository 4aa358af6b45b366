/**
 * A child process that holds locks for inspection tests (holder-process.ts): RedisLockModule on
 * `url` with `keyPrefix`, `appName` and `leaseTime` from argv. Prints `ready <client id> <pid>`,
 * then runs one stdin command per line and prints `done <line>` once it holds what was asked:
 * `lock <key>`, `read <key>`, `write <key>`, `fair <key>`, `permit <key> <permits>`,
 * `lease <key> <ms>` (a lock with an explicit lease: no watchdog), `release <key>` (the last hold
 * taken on it), or `wait <key>` / `fairwait <key>` (prints `started <line>` and waits for the lock
 * in the background).
 */
import 'reflect-metadata';
import { createInterface } from 'node:readline';
import type { LockEngine } from '../../lib/core';
import { LOCK_ENGINE, type LockService } from '../../lib';
import { childApp } from './child-app';

/** The holds taken, by key, the last one last. */
const holds = new Map<string, { release(): Promise<void> }[]>();

/** Keeps the hold `taking` resolves to under `key`. */
async function kept(key: string, taking: Promise<{ release(): Promise<void> }>) {
  const hold = await taking;
  holds.set(key, [...(holds.get(key) ?? []), hold]);
}

function run(locks: LockService, words: string[]): Promise<unknown> | undefined {
  const [command, key, extra] = words;
  switch (command) {
    case 'lock':
      return kept(key, locks.acquire(key));
    case 'lease':
      return kept(key, locks.acquire(key, { leaseTime: Number(extra) }));
    case 'release':
      return holds.get(key)?.pop()?.release() ?? Promise.reject(new Error(`no hold on ${key}`));
    case 'read':
    case 'write':
      return kept(key, locks.acquire(key, { mode: command }));
    case 'fair':
      return kept(key, locks.acquire(key, { fair: true }));
    case 'permit':
      return kept(key, locks.semaphore(key, { permits: Number(extra) }).acquire());
    case 'wait':
      void locks.acquire(key, { waitTime: 60_000 }).catch(() => undefined);
      return undefined;
    case 'fairwait':
      void locks.acquire(key, { fair: true, waitTime: 60_000 }).catch(() => undefined);
      return undefined;
    default:
      throw new Error(`unknown command ${command}`);
  }
}

async function main() {
  const [url, keyPrefix, appName, leaseTime] = process.argv.slice(2);
  const { app, locks } = await childApp({
    redis: url,
    keyPrefix,
    appName,
    leaseTime: Number(leaseTime),
    fencing: true,
  });
  const engine = app.get<LockEngine>(LOCK_ENGINE);
  process.stdout.write(`ready ${engine.clientId} ${process.pid}\n`);
  createInterface({ input: process.stdin }).on('line', (line) => {
    const pending = run(locks, line.trim().split(/\s+/));
    if (pending === undefined) process.stdout.write(`started ${line}\n`);
    else void pending.then(() => process.stdout.write(`done ${line}\n`));
  });
}

main().catch((error: unknown) => {
  process.stderr.write(`holder-child failed: ${String(error)}\n`);
  process.exit(1);
});
