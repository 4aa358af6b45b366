/**
 * A child process of the contention scenario: argv = adapter port lockKey stateKey workers
 * durationMs processIndex. Prints "ready", reads the start time (ms epoch) from stdin, runs,
 * and prints one JSON ContentionResult line on stdout.
 */
import 'reflect-metadata';
import { Redis } from 'ioredis';
import { nestjsRedisLock, redisSemaphore, redlock, type Adapter } from '../lib/adapters';
import { contend } from '../lib/contend';

async function main() {
  const [adapterName, port, lock, state, workers, duration, processIndex] = process.argv.slice(2);
  const url = `redis://127.0.0.1:${port}`;
  const redis = new Redis(url);
  const lockClient = new Redis(url);
  let adapter: Adapter;
  if (adapterName === 'lib') adapter = (await nestjsRedisLock(url)).run;
  else if (adapterName === 'semaphore') adapter = redisSemaphore(lockClient);
  else adapter = redlock(lockClient);
  const ids = Array.from({ length: Number(workers) }, (_, i) => `p${processIndex}w${i}`);
  process.stdout.write('ready\n');
  let input = '';
  for await (const chunk of process.stdin) input += (chunk as Buffer).toString();
  const result = await contend(
    adapter,
    redis,
    { lock, state },
    ids,
    Number(duration),
    Number(input.trim()),
  );
  process.stdout.write(`${JSON.stringify(result)}\n`);
  await adapter.close();
  redis.disconnect();
  lockClient.disconnect();
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
