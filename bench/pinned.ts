/**
 * Sequential `run()` against the protocol floor with this process and its redis-server pinned
 * to CPUs by `taskset` (Linux): `same` puts both on CPU 0, so nothing overlaps and the cycle
 * shows the CPU the library adds with little noise; `apart` puts Redis on CPU 1, as an unpinned
 * run mostly is, where each round trip also pays the wake-up of the other CPU. Paired rounds,
 * the order alternating; the control row is the floor again on the library's own connection.
 * `npm run bench:pinned [-- same|apart] [-- --rounds N]`. See bench/README.md.
 */
import 'reflect-metadata';
import { execFileSync } from 'node:child_process';
import { cpus } from 'node:os';
import { Redis } from 'ioredis';
import { NO_PERSISTENCE, spawnRedisServer } from '../tools/redis/redis-process';
import { nestjsRedisLock, protocolFloor, type Adapter } from './lib/adapters';
import { cycles, fmt, median, table } from './lib/stats';

const CYCLES = 4_000;
const arg = (name: string) => process.argv[process.argv.indexOf(name) + 1];
const rounds = process.argv.includes('--rounds') ? Number(arg('--rounds')) : 12;
const picked = ['same', 'apart'].filter((mode) => process.argv.includes(mode));
const modes = picked.length > 0 ? picked : ['same', 'apart'];

/** Pins every thread of `pid` to the CPUs of `mask` (taskset -a -p). */
function pin(pid: number, mask: number): void {
  execFileSync('taskset', ['-a', '-p', mask.toString(16), String(pid)], { stdio: 'ignore' });
}

async function main(): Promise<void> {
  if (process.platform !== 'linux' || cpus().length < 2) {
    throw new Error('bench:pinned needs Linux (taskset) and at least 2 CPUs.');
  }
  const server = await spawnRedisServer({ args: NO_PERSISTENCE });
  const lib = await nestjsRedisLock(server.url);
  const floorClient = new Redis(server.url);
  const floor = await protocolFloor(floorClient);
  // The ioredis connection behind the store's client port (its ioredis adapter's `redis`).
  const libClient = (lib.locks as unknown as { store: { client: { redis: Redis } } }).store.client
    .redis;
  const control = await protocolFloor(libClient, "protocol floor on run()'s connection (control)");
  const rows: Adapter[] = [floor, lib.run, control];
  let seq = 0;
  const noop = () => Promise.resolve();
  const block = (adapter: Adapter) =>
    cycles(() => adapter.locked(`pinned:${++seq}`, noop), CYCLES, 1);
  try {
    for (const mode of modes) {
      pin(process.pid, 1);
      pin(server.pid, mode === 'same' ? 1 : 2);
      for (const adapter of rows) await block(adapter); // warm-up
      // Cycles per second of each row, one map per round.
      const rates: Map<Adapter, number>[] = [];
      for (let round = 0; round < rounds; round++) {
        const rate = new Map<Adapter, number>();
        for (const adapter of round % 2 === 0 ? rows : [...rows].reverse())
          rate.set(adapter, (await block(adapter)).cyclesPerSec);
        rates.push(rate);
      }
      const overRounds = (f: (rate: Map<Adapter, number>) => number) => median(rates.map(f));
      process.stdout.write(
        `\n### ${mode === 'same' ? 'Node and Redis on CPU 0' : 'Node on CPU 0, Redis on CPU 1'} (${rounds} rounds of ${CYCLES} cycles)\n\n`,
      );
      process.stdout.write(
        table(
          ['implementation', 'µs per cycle', 'of the floor (paired)'],
          rows.map((row) => [
            row.name,
            fmt(
              overRounds((rate) => 1e6 / rate.get(row)!),
              1,
            ),
            fmt(
              overRounds((rate) => rate.get(row)! / rate.get(floor)!),
              3,
            ),
          ]),
        ) + '\n',
      );
    }
  } finally {
    await lib.run.close();
    floorClient.disconnect();
    await server.stop();
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`${(error as Error).stack ?? String(error)}\n`);
  process.exit(1);
});
