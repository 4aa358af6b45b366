/**
 * Timing tools the fault kit lacks: a proxy that delays replies, renewal and timer probes, and
 * clocks that ignore `Date.now` mocks (first written for the suites of issue 8).
 */
import { createServer, Socket, type Server } from 'node:net';
import { performance } from 'node:perf_hooks';
import { Redis } from 'ioredis';
import type { LockService } from '../../lib';
import { freePort } from '../support/redis-server';
import { sleep } from '../../tools/time';

/** Milliseconds from a monotonic clock: unaffected by a mocked or stepped `Date.now`. */
export const monotonic = () => performance.now();

/**
 * Blocks the event loop for `ms` from a setImmediate callback, as a CPU-bound request handler
 * would: outside the timers phase, so that overdue timers run before pending I/O is read.
 */
export const stallEventLoop = (ms: number) =>
  new Promise<void>((resolve) =>
    setImmediate(() => {
      const end = monotonic() + ms;
      while (monotonic() < end) {
        // spin
      }
      resolve();
    }),
  );

/** When `signal` aborted (monotonic ms), or -1 while it has not. */
export function abortedAt(signal: AbortSignal): () => number {
  let at = signal.aborted ? monotonic() : -1;
  signal.addEventListener('abort', () => (at = monotonic()), { once: true });
  return () => at;
}

/**
 * Resolves true once Redis shows `count` renewals of lock `name` (its PTTL going back up),
 * false if fewer happen within `timeout` ms.
 */
export async function renewals(raw: Redis, name: string, count: number, timeout: number) {
  const deadline = monotonic() + timeout;
  let last = await raw.pttl(name);
  let seen = 0;
  while (seen < count) {
    if (monotonic() > deadline) return false;
    await sleep(2);
    const pttl = await raw.pttl(name);
    if (pttl > last + 10) seen++;
    last = pttl;
  }
  return true;
}

/** Ref'd timers alive now (they keep the process running): `process.getActiveResourcesInfo()`. */
export const refTimers = () =>
  process.getActiveResourcesInfo().filter((resource) => resource === 'Timeout').length;

/**
 * The fewest ref'd timers seen over `samples` looks 5 ms apart: a timer that lives for the whole
 * stretch is counted, a passing one (another client's reconnect or close timer) is not.
 */
export async function steadyRefTimers(samples = 5): Promise<number> {
  let fewest = refTimers();
  for (let i = 1; i < samples; i++) {
    await sleep(5);
    fewest = Math.min(fewest, refTimers());
  }
  return fewest;
}

/** How many subscribers Redis counts on `channel`. */
export async function subscribers(raw: Redis, channel: string): Promise<number> {
  const reply = (await raw.pubsub('NUMSUB', channel)) as [string, number];
  return Number(reply[1]);
}

/** The release channel of lock `name` (Redisson's naming). */
export const channelOf = (name: string) => `redisson_lock__channel:{${name}}`;

/** LockService with the API issue 8 asks for (`detach`), for tests written before it exists. */
type Detaching = LockService & { detach<T>(fn: () => T): T };

/** `locks.detach(fn)`: runs `fn` outside any lock context (a TypeError while it is missing). */
export const detach = <T>(locks: LockService, fn: () => T): T => (locks as Detaching).detach(fn);

/**
 * A loopback TCP proxy in front of Redis on `target` that delivers every reply `latency` ms late
 * (a constant delay keeps them in order); with `after`, only on a connection once its client sent
 * a command matching it (e.g. /evalsha/i: the command link is slow, the pub/sub link is not).
 */
export async function delayProxy(target: number, latency: number, after?: RegExp) {
  const port = await freePort();
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    const upstream = new Socket();
    upstream.connect(target, '127.0.0.1');
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('error', () => undefined);
      socket.on('close', () => {
        sockets.delete(socket);
        client.destroy();
        upstream.destroy();
      });
    }
    let delayed = after === undefined;
    client.on('data', (data: Buffer) => {
      delayed ||= after!.test(data.toString('latin1'));
      upstream.write(data);
    });
    upstream.on('data', (data: Buffer) => {
      if (delayed) setTimeout(() => client.write(data), latency);
      else client.write(data);
    });
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return {
    port,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
