import { Redis } from 'ioredis';
import { floorScripts, type Adapter } from './adapters';

/**
 * Who a release notice wakes in a hand-off floor: `all`, every waiting process (one channel, the
 * lock's, as every Redisson-layout waiter subscribes to); `next`, only the process whose turn is
 * next (a channel per process, which a Redisson client would not hear).
 */
export type FloorWake = 'all' | 'next';

/** Client `index` of `count` on one run's lock: its place in the ring. */
export interface RingPlace {
  lock: string;
  index: number;
  count: number;
}

/**
 * The hand-off floor across processes: the protocol floor's scripts (floorScripts, Redisson
 * layout) on bare ioredis, with the turn order known in advance. The
 * `count` processes take the lock in a ring: the k-th release notice is process k mod `count`'s
 * turn, so only the due process attempts, on its notice, and never fails; the others only read
 * the notice. No turn policy, no failed attempt, no timer: what a cross-process hand-off costs at
 * least on this machine with these wake-ups. Benchmark only; closing passes the turn on, so the
 * ring drains when the workers stop.
 */
export async function handoffFloor(
  url: string,
  wake: FloorWake,
  { lock, index, count }: RingPlace,
): Promise<Adapter> {
  const client = new Redis(url);
  const subscriber = new Redis(url);
  const scripts = await floorScripts(client);
  /** Release notices seen (all) or turns received (next); process 0 starts with the turn. */
  let notices = 0;
  let turn = index === 0;
  let waiter: (() => void) | undefined;
  let closed = false;
  const channelOf = (process: number) =>
    `redisson_lock__channel:{${lock}}${wake === 'next' ? `:${process}` : ''}`;
  const next = (index + 1) % count;
  // After the workers stopped, a pass may meet a closed connection: the ring is done then.
  const passOn = () => client.publish(channelOf(next), '0').catch(() => 0);

  subscriber.on('message', () => {
    if (wake === 'all' && ++notices % count !== index) return;
    if (closed) void passOn();
    else if (waiter) waiter();
    else turn = true;
  });
  // Subscribed before the shared start: no notice of the ring is missed.
  await subscriber.subscribe(channelOf(index));
  return {
    name: `hand-off floor, ${wake === 'all' ? 'every waiter woken' : 'only the next woken'}`,
    async locked(key, fn) {
      if (key !== lock) throw new Error(`hand-off floor: one lock per ring (${lock})`);
      if (!turn) await new Promise<void>((resolve) => (waiter = resolve));
      waiter = undefined;
      turn = false;
      const n = await scripts.take(lock);
      if (n === undefined)
        throw new Error(`hand-off floor: ${lock} busy on process ${index}'s turn`);
      try {
        return await fn();
      } finally {
        await scripts.release(lock, n, channelOf(next));
      }
    },
    async close() {
      closed = true;
      if (turn) await passOn();
      // Stay a moment for turns still coming round the ring, and pass them on.
      await new Promise((resolve) => setTimeout(resolve, 300));
      subscriber.disconnect();
      client.disconnect();
    },
  };
}
