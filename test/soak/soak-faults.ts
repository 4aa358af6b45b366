/**
 * The soak's fault injector: between healthy stretches it restarts the lock's Redis (SIGKILL,
 * then a new server on the same port: without persistence every lock is gone), pauses it
 * (SIGSTOP … SIGCONT), and cuts or stalls the workers' connections through a loopback TCP proxy.
 * Some faults outlast the lease, some do not.
 */
import { tcpProxy } from '../faults/fault-kit';
import type { TestRedis } from '../support/redis-server';
import { FAULT_KINDS, micros, type FaultKind, type FaultRecord } from './soak-records';
import { sleep } from '../../tools/time';

const between = (min: number, max: number) => min + Math.floor(Math.random() * (max - min));

/** The proxy the workers reach the lock's Redis through. */
export type FaultProxy = Awaited<ReturnType<typeof tcpProxy>>;

/** How long each kind of fault lasts, ms: [min, max). The lease is 1 000 ms. */
const DURATION: Record<FaultKind, [number, number]> = {
  restart: [0, 400], // down time between the kill and the new server's start
  pause: [200, 2_500],
  cut: [100, 2_500],
  stall: [100, 2_500],
};

/** Healthy time between two faults, ms. */
const HEALTHY: [number, number] = [1_500, 3_500];

type Target = { redis: TestRedis; proxy: FaultProxy };

/** How each kind of fault begins and ends. */
const FAULTS: Record<FaultKind, { begin(on: Target): unknown; end(on: Target): unknown }> = {
  restart: { begin: ({ redis }) => redis.kill(), end: ({ redis }) => redis.restart() },
  pause: { begin: ({ redis }) => redis.pause(), end: ({ redis }) => redis.resume() },
  cut: { begin: ({ proxy }) => proxy.cut(), end: ({ proxy }) => proxy.restore() },
  stall: { begin: ({ proxy }) => proxy.stall(), end: ({ proxy }) => proxy.unstall() },
};

/** Injects one fault of `kind` and resolves when it is over (Redis answering, proxy restored). */
async function inject(kind: FaultKind, redis: TestRedis, proxy: FaultProxy): Promise<FaultRecord> {
  const start = micros();
  const duration = between(...DURATION[kind]);
  await FAULTS[kind].begin({ redis, proxy });
  await sleep(duration);
  await FAULTS[kind].end({ redis, proxy });
  return { kind, start, end: micros() };
}

/**
 * Injects faults, one kind after the other, until `stopAt` (Date.now() ms) or `stopped()`,
 * with healthy stretches between them; resolves with every fault injected.
 */
export async function injectFaults(
  redis: TestRedis,
  proxy: FaultProxy,
  stopAt: number,
  stopped: () => boolean,
): Promise<FaultRecord[]> {
  const faults: FaultRecord[] = [];
  for (let i = 0; ; i++) {
    await sleep(between(...HEALTHY));
    if (stopped() || Date.now() + DURATION.pause[1] > stopAt) return faults;
    faults.push(await inject(FAULT_KINDS[i % FAULT_KINDS.length], redis, proxy));
  }
}
