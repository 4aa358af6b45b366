/**
 * A child process of the fairness scenario: argv = tag port lockKey counterKey durationMs
 * index count (its place among the run's workers) [burstSections pauseMs] (see Bursts).
 * Prints "ready", reads the start time (ms epoch) from stdin, loops one worker, and prints its
 * WorkerLog as one JSON line on stdout.
 */
import 'reflect-metadata';
import { Redis } from 'ioredis';
import { counterLoop, fairnessClient, type FairnessTag } from '../lib/fairness-loop';

async function main() {
  const [tag, port, lock, counter, duration, index, count, burst, pause] = process.argv.slice(2);
  const url = `redis://127.0.0.1:${port}`;
  const state = new Redis(url);
  const client = await fairnessClient(tag as FairnessTag, url, {
    lock,
    index: Number(index),
    count: Number(count),
  });
  process.stdout.write('ready\n');
  let input = '';
  for await (const chunk of process.stdin) input += (chunk as Buffer).toString();
  const log = await counterLoop(
    client,
    state,
    { lock, counter },
    Number(duration),
    Number(input.trim()),
    burst === undefined ? undefined : { sections: Number(burst), pauseMs: Number(pause) },
  );
  process.stdout.write(`${JSON.stringify(log)}\n`);
  await client.close();
  state.disconnect();
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
