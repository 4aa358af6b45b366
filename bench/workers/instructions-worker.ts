/**
 * One row of the instruction-count probe (bench/instructions.ts), run under callgrind:
 * `<row> <warm-up cycles> <measured cycles> <redis url>`. Takes and releases a fresh key per
 * cycle (`run64`: 64 callers at once, as scenario 2), then exits.
 */
import 'reflect-metadata';
import { Redis } from 'ioredis';
import { nestjsRedisLock, protocolFloor, type Adapter } from '../lib/adapters';

/** Callers at once in the `run64` row. */
const CONCURRENT = 64;

async function main(): Promise<void> {
  const [row, warm, measured, url] = process.argv.slice(2);
  const client = new Redis(url);
  // No start-up check: under callgrind a connection can take longer than its 5 s bound.
  const lib = row === 'floor' ? undefined : await nestjsRedisLock(url, { checkOnStartup: 'off' });
  const adapter: Adapter =
    row === 'floor' ? await protocolFloor(client) : row === 'decorator' ? lib!.decorator : lib!.run;
  const callers = row === 'run64' ? CONCURRENT : 1;
  const noop = () => Promise.resolve();
  let seq = 0;
  const loop = async (cycles: number) => {
    for (let i = 0; i < cycles; i++) await adapter.locked(`instructions:${row}:${++seq}`, noop);
  };
  const total = Number(warm) + Number(measured);
  await Promise.all(Array.from({ length: callers }, () => loop(Math.round(total / callers))));
  await lib?.run.close();
  client.disconnect();
}

main().catch((error: unknown) => {
  process.stderr.write(`${(error as Error).stack ?? String(error)}\n`);
  process.exit(1);
});
