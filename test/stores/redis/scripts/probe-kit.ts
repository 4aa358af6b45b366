import type { Redis } from 'ioredis';

/** Redis' clock in milliseconds (the clock the semaphore scripts read). */
export async function redisNow(raw: Redis): Promise<number> {
  const [seconds, micros] = await raw.time();
  return Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
}

/** How many times each command ran since the last CONFIG RESETSTAT (INFO commandstats). */
export async function commandCalls(raw: Redis): Promise<Record<string, number>> {
  const calls: Record<string, number> = {};
  for (const [, command, count] of (await raw.info('commandstats')).matchAll(
    /^cmdstat_([^:]+):calls=(\d+)/gm,
  )) {
    calls[command] = Number(count);
  }
  return calls;
}

/** A subscriber on some channels, recording what it receives. */
export interface Listener {
  readonly messages: [channel: string, message: string][];
  /** Resolves once `count` messages have arrived in all. */
  received(count: number): Promise<void>;
  close(): void;
}

/** Subscribes a new connection (from `raw`) to `channels`. */
export async function listen(raw: Redis, ...channels: string[]): Promise<Listener> {
  const subscriber = raw.duplicate();
  const messages: [string, string][] = [];
  const waiting: { count: number; resolve: () => void }[] = [];
  subscriber.on('message', (channel: string, message: string) => {
    messages.push([channel, message]);
    for (const wait of waiting.filter((w) => w.count <= messages.length)) wait.resolve();
  });
  await subscriber.subscribe(...channels);
  return {
    messages,
    received: (count) =>
      count <= messages.length
        ? Promise.resolve()
        : new Promise<void>((resolve) => waiting.push({ count, resolve })),
    close: () => subscriber.disconnect(),
  };
}
