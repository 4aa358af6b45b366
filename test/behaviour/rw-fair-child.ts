/**
 * Child process of read-write.spec.ts and fair.spec.ts: one Nest app with RedisLockModule that
 * takes and releases locks on command, through the public API. argv: redisUrl keyPrefix
 * leaseTime fairQueueTimeout. stdin, one command a line:
 *   `acquire <id> <key> <read|write|fair> <waitTime>` → `held <id>` (or `busy <id>`)
 *   `release <id>` → `released <id>`
 * Prints `ready` once the module is up; `error <id> <message>` when a command fails.
 */
import 'reflect-metadata';
import { createInterface } from 'node:readline';
import type { LockHandle } from '../../lib';
import { childApp } from '../support/child-app';

async function main() {
  const [url, keyPrefix, leaseTime, fairQueueTimeout] = process.argv.slice(2);
  const { locks } = await childApp({
    redis: url,
    keyPrefix,
    leaseTime: Number(leaseTime),
    fairQueueTimeout: Number(fairQueueTimeout),
  });
  const held = new Map<string, LockHandle>();
  const say = (line: string) => process.stdout.write(`${line}\n`);

  async function command(line: string) {
    const [verb, id, key, kind, waitTime] = line.trim().split(' ');
    try {
      if (verb === 'acquire') {
        const options = kind === 'fair' ? { fair: true } : { mode: kind as 'read' | 'write' };
        const lock = await locks.tryAcquire(key, { ...options, waitTime: Number(waitTime) });
        if (!lock) return say(`busy ${id}`);
        held.set(id, lock);
        return say(`held ${id}`);
      }
      if (verb === 'release') {
        await held.get(id)!.release();
        held.delete(id);
        return say(`released ${id}`);
      }
    } catch (error) {
      say(`error ${id} ${error instanceof Error ? error.message : String(error)}`);
    }
  }

  createInterface({ input: process.stdin }).on('line', (line) => void command(line));
  say('ready');
}

main().catch((error: unknown) => {
  process.stderr.write(`rw-fair-child failed: ${String(error)}\n`);
  process.exit(1);
});
