/**
 * Instructions the Node process executes per acquire + release, counted by valgrind's callgrind
 * (user-space instructions of every thread: JavaScript, V8, libuv; not the kernel's). Each row
 * runs twice, a short and a long measured loop after the same warm-up, and the difference is
 * divided by the extra cycles, so start-up and most compiling cancel out. Unlike a timed figure
 * it hardly moves with the machine's load. See bench/README.md.
 *
 * `npm run bench:instructions [-- --cycles N] [-- --rows floor,run,run64,decorator] [-- --check]`
 * --check fails (exit 1) when run()'s ratio to the floor is more than 5 % above the one in
 * bench/results/instructions-baseline.json.
 */
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { NO_PERSISTENCE, spawnRedisServer } from '../tools/redis/redis-process';
import { transpileWorker } from '../tools/transpile-worker';
import { fmt, table } from './lib/stats';

const arg = (name: string) => process.argv[process.argv.indexOf(name) + 1];
const CYCLES = process.argv.includes('--cycles') ? Number(arg('--cycles')) : 12_000;
const WARM_UP = 2_000;
/** How far run()'s ratio to the floor may rise above the baseline's before --check fails. */
const TOLERANCE = 0.05;
const BASELINE = join(__dirname, 'results', 'instructions-baseline.json');
const NAMES = {
  floor: 'protocol floor (2 × EVALSHA)',
  run: 'nestjs-redis-lock run()',
  run64: 'nestjs-redis-lock run(), 64 callers at once',
  decorator: 'nestjs-redis-lock @Locked',
} as const;
type Row = keyof typeof NAMES;
const rows = (
  process.argv.includes('--rows') ? arg('--rows').split(',') : ['floor', 'run', 'run64']
) as Row[];

/** Instructions of one worker run under callgrind: WARM_UP + `measured` cycles of `row`. */
function count(
  build: ReturnType<typeof transpileWorker>,
  row: Row,
  measured: number,
  url: string,
): Promise<number> {
  const args = ['--tool=callgrind', '--callgrind-out-file=/dev/null', '--smc-check=all-non-file'];
  args.push(process.execPath, build.entry, row, String(WARM_UP), String(measured), url);
  return new Promise((resolve, reject) => {
    execFile('valgrind', args, { env: build.env, maxBuffer: 1 << 24 }, (error, _out, stderr) => {
      const collected = /Collected : (\d+)/.exec(stderr);
      if (error || !collected) {
        reject(new Error(`callgrind on the ${row} row failed: ${error?.message}\n${stderr}`));
      } else resolve(Number(collected[1]));
    });
  });
}

async function main(): Promise<void> {
  if (!rows.includes('floor') || !rows.every((r) => r in NAMES))
    throw new Error(`--rows: some of ${Object.keys(NAMES).join(', ')}, with floor`);
  const server = await spawnRedisServer({ args: NO_PERSISTENCE });
  const floorScripts = ['acquire.lua', 'release.lua'].map((f) =>
    join(__dirname, 'lib', 'floor', f),
  );
  const build = transpileWorker(join(__dirname, 'workers', 'instructions-worker.ts'), floorScripts);
  try {
    const measure = async () => {
      const perCycle = new Map<Row, number>();
      for (const row of rows) {
        const short = await count(build, row, CYCLES / 4, server.url);
        const long = await count(build, row, CYCLES / 4 + CYCLES, server.url);
        perCycle.set(row, (long - short) / CYCLES);
        process.stderr.write(`${row}: ${fmt(perCycle.get(row)!)} instructions per cycle\n`);
      }
      return perCycle;
    };
    const report = (perCycle: Map<Row, number>) => {
      const floor = perCycle.get('floor')!;
      process.stdout.write(
        `\n### Node instructions per acquire + release (callgrind; ${CYCLES} cycles after ${WARM_UP})\n\n` +
          table(
            ['implementation', 'instructions per cycle', 'of the floor'],
            rows.map((row) => [
              NAMES[row],
              fmt(perCycle.get(row)!),
              fmt(perCycle.get(row)! / floor, 2),
            ]),
          ) +
          '\n',
      );
      return (perCycle.get('run') ?? NaN) / floor;
    };
    let ratio = report(await measure());
    if (process.argv.includes('--check')) {
      const { runToFloor } = JSON.parse(readFileSync(BASELINE, 'utf8')) as { runToFloor: number };
      const limit = runToFloor * (1 + TOLERANCE);
      // A regression shows in every measurement; the GC's and the compiler's timing rarely
      // push two in a row over the limit: measure again before failing.
      if (ratio > limit) ratio = Math.min(ratio, report(await measure()));
      process.stdout.write(
        `run()/floor ${fmt(ratio, 3)}; baseline ${fmt(runToFloor, 3)}, limit ${fmt(limit, 3)}: ${ratio <= limit ? 'ok' : 'REGRESSED'}\n`,
      );
      if (!(ratio <= limit)) process.exitCode = 1;
    }
  } finally {
    build.remove();
    await server.stop();
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`${(error as Error).stack ?? String(error)}\n`);
  process.exit(1);
});
