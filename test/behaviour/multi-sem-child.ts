/**
 * Child process of the family specs (multi-lock.spec.ts, semaphore.spec.ts), one LockService
 * on a Redis server. argv: redisUrl keyPrefix mode ...
 * - `opposite <ms>`: two workers loop for <ms> ms over a multi-lock of `a` and `b`, one in each
 *   order, each doing a GET-then-SET increment of `count` and checking that nobody else is
 *   inside (`inside`); prints `done <cycles> <violations>`.
 * - `permits <n> <ms>`: two workers loop for <ms> ms holding a permit of semaphore `s` (limit n),
 *   counting holders in `holders` on entry; prints `done <cycles> <violations>`.
 * - `hold-permit <n>`: takes a permit of `s` (limit n), prints `held` and stays until killed.
 * Prints `ready` once connected; the looping modes start when `go` arrives on stdin.
 */
import 'reflect-metadata';
import { Redis } from 'ioredis';
import { childApp } from '../support/child-app';

const pause = () => new Promise<void>((resolve) => setImmediate(resolve));

async function main() {
  const [url, keyPrefix, mode, ...rest] = process.argv.slice(2);
  const { app, locks } = await childApp({ redis: url, keyPrefix, leaseTime: 1_000 });
  const raw = new Redis(url);
  const counter = (name: string) => `${keyPrefix}${name}:counter`;
  if (mode === 'hold-permit') {
    await locks.semaphore('s', { permits: Number(rest[0]) }).acquire();
    process.stdout.write('held\n');
    setInterval(() => undefined, 60_000);
    return;
  }
  process.stdout.write('ready\n');
  await new Promise<void>((resolve) => process.stdin.once('data', () => resolve()));
  let cycles = 0;
  let violations = 0;
  const until = Date.now() + Number(mode === 'opposite' ? rest[0] : rest[1]);
  const worker = async (index: number) => {
    const semaphore = locks.semaphore('s', { permits: Number(rest[0]) });
    while (Date.now() < until) {
      if (mode === 'opposite') {
        await locks.run(index === 0 ? ['a', 'b'] : ['b', 'a'], async () => {
          if ((await raw.incr(counter('inside'))) !== 1) violations++;
          const count = Number((await raw.get(counter('count'))) ?? 0);
          await pause();
          await raw.set(counter('count'), count + 1);
          await raw.decr(counter('inside'));
        });
      } else {
        await semaphore.run(async () => {
          if ((await raw.incr(counter('holders'))) > Number(rest[0])) violations++;
          await pause();
          await raw.decr(counter('holders'));
        });
      }
      cycles++;
    }
  };
  await Promise.all([worker(0), worker(1)]);
  process.stdout.write(`done ${cycles} ${violations}\n`);
  raw.disconnect();
  await app.close();
  process.exit(0);
}

main().catch((error: unknown) => {
  process.stderr.write(`multi-sem-child failed: ${String(error)}\n`);
  process.exit(1);
});
