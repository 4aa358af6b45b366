import type { Redis } from 'ioredis';
import { loadScript } from '../../../../lib/stores/redis/lock-scripts';
import type { LuaScript } from '../../../../lib/stores/redis/lua-script';
import { ioredisClient } from '../../../../lib/stores/redis/client/ioredis';

/** A script of lib/stores/redis/scripts, as the engine loads and runs it (by SHA). */
export function redisScript(file: string): LuaScript {
  return loadScript(file);
}

const scripts = {
  readAcquire: redisScript('read-acquire.lua'),
  writeAcquire: redisScript('write-acquire.lua'),
  readRelease: redisScript('read-release.lua'),
  writeRelease: redisScript('write-release.lua'),
  forceUnlock: redisScript('force-unlock.lua'),
  fairAcquire: redisScript('fair-acquire.lua'),
  fairRelease: redisScript('fair-release.lua'),
  fairLeave: redisScript('fair-leave.lua'),
  renewAll: redisScript('renew-all.lua'),
};

/** Unlock latch lifetime the tests pass, ms. */
const LATCH_TTL = 10_000;

/** `prefix:{name}`, or `prefix:name` when the name has a hash tag (this library's rule). */
const aux = (prefix: string, name: string) =>
  name.includes('{') ? `${prefix}:${name}` : `${prefix}:{${name}}`;

/** A latch key for request `id` (any short string, repeated to 32 characters). */
const latch = (name: string, id: string) =>
  `${aux('redisson_unlock_latch', name)}:${id.repeat(32).slice(0, 32)}`;

const int = (reply: unknown) => (reply === null ? null : Number(reply));

/** Our read-write lock scripts on lock `name`, with the names the engine will pass. */
export function rwLock(raw: Redis, name: string) {
  const channel = `redisson_rwlock:${name.includes('{') ? name : `{${name}}`}`;
  const prefix = name.includes('{') ? name : `{${name}}`;
  const leaseKey = (owner: string) => `${prefix}:${owner}:rwlock_timeout:1`;
  return {
    name,
    channel,
    prefix,
    leaseKey,
    read: async (owner: string, lease = 30_000) =>
      Number(
        await scripts.readAcquire.run(ioredisClient(raw), 2, name, leaseKey(owner), lease, owner),
      ),
    write: async (owner: string, lease = 30_000) =>
      Number(await scripts.writeAcquire.run(ioredisClient(raw), 1, name, lease, owner)),
    readRelease: async (owner: string, requestId: string) =>
      int(
        await scripts.readRelease.run(
          ioredisClient(raw),
          3,
          name,
          leaseKey(owner),
          latch(name, requestId),
          channel,
          owner,
          LATCH_TTL,
          prefix,
          'publish',
        ),
      ),
    writeRelease: async (owner: string, requestId: string) =>
      int(
        await scripts.writeRelease.run(
          ioredisClient(raw),
          2,
          name,
          latch(name, requestId),
          channel,
          owner,
          LATCH_TTL,
          'publish',
        ),
      ),
    forceUnlock: async () => int(await forceUnlock(raw, name)),
  };
}

/** Our fair lock scripts on lock `name`, with the names the engine will pass. */
export function fairLock(raw: Redis, name: string) {
  const queue = aux('redisson_lock_queue', name);
  const timeouts = aux('redisson_lock_timeout', name);
  const turn = `${timeouts}:turn`;
  const channels = aux('redisson_lock__channel', name);
  return {
    name,
    queue,
    timeouts,
    turn,
    channelOf: (owner: string) => `${channels}:${owner}`,
    /** Options: lease (30 s), place timeout (5 s), join the queue when refused (yes). */
    acquire: async (
      owner: string,
      options: { lease?: number; place?: number; join?: boolean } = {},
    ) =>
      Number(
        await scripts.fairAcquire.run(
          ioredisClient(raw),
          4,
          name,
          queue,
          timeouts,
          turn,
          options.lease ?? 30_000,
          owner,
          options.place ?? 5_000,
          options.join === false ? '0' : '1',
          channels,
          'publish',
        ),
      ),
    /** Options: place timeout (5 s), undo the owner's grant (no). */
    release: async (
      owner: string,
      requestId: string,
      options: { place?: number; requeue?: boolean } = {},
    ) =>
      int(
        await scripts.fairRelease.run(
          ioredisClient(raw),
          5,
          name,
          queue,
          timeouts,
          latch(name, requestId),
          turn,
          channels,
          owner,
          LATCH_TTL,
          'publish',
          options.place ?? 5_000,
          options.requeue ? '1' : '0',
        ),
      ),
    leave: async (owner: string, place = 5_000) =>
      Number(
        await scripts.fairLeave.run(
          ioredisClient(raw),
          4,
          name,
          queue,
          timeouts,
          turn,
          channels,
          owner,
          'publish',
          place,
        ),
      ),
    forceUnlock: async () => Number(await forceUnlock(raw, name)),
  };
}

/** One hold for renew-all: its kind, its keys, and its owner. */
export interface RenewHold {
  kind: 'l' | 'w' | 'r';
  keys: string[];
  owner: string;
}

/** Runs renew-all.lua on a batch; returns its 0/1 per hold. */
export async function renewAll(raw: Redis, lease: number, holds: RenewHold[]): Promise<number[]> {
  const keys = holds.flatMap((hold) => hold.keys);
  const kinds = holds.map((hold) => hold.kind).join('');
  const reply = await scripts.renewAll.run(
    ioredisClient(raw),
    keys.length,
    ...keys,
    lease,
    kinds,
    ...holds.map((hold) => hold.owner),
  );
  return (reply as unknown[]).map(Number);
}

/** The busy reply's PTTL / retry delay: -2 - value. */
export const waitOf = (reply: number) => -2 - reply;

/** Messages on pub/sub channels, kept in order and awaitable. */
export class Listener {
  readonly messages: [channel: string, message: string][] = [];
  private readonly waiting: { channel: string; resolve: (message: string) => void }[] = [];
  private seen = new Map<string, number>();

  private constructor(private readonly sub: Redis) {
    sub.on('message', (channel: string, message: string) => {
      this.messages.push([channel, message]);
      const waiter = this.waiting.find((w) => w.channel === channel);
      if (!waiter) return;
      this.waiting.splice(this.waiting.indexOf(waiter), 1);
      this.seen.set(channel, (this.seen.get(channel) ?? 0) + 1);
      waiter.resolve(message);
    });
  }

  /** A new connection subscribed to `channels`. */
  static async open(raw: Redis, ...channels: string[]): Promise<Listener> {
    const listener = new Listener(raw.duplicate());
    await listener.sub.subscribe(...channels);
    return listener;
  }

  /** The messages received on `channel` so far. */
  on(channel: string): string[] {
    return this.messages.filter(([c]) => c === channel).map(([, message]) => message);
  }

  /** The next message on `channel` not yet returned by next(). */
  next(channel: string): Promise<string> {
    const index = this.seen.get(channel) ?? 0;
    const received = this.on(channel);
    if (received.length > index) {
      this.seen.set(channel, index + 1);
      return Promise.resolve(received[index]);
    }
    return new Promise((resolve) => this.waiting.push({ channel, resolve }));
  }

  close(): void {
    this.sub.disconnect();
  }
}

/** force-unlock.lua on `name`, whatever kind of lock lives there (classic pub/sub). */
export function forceUnlock(raw: Redis, name: string): Promise<unknown> {
  const tagged = name.includes('{') ? name : `{${name}}`;
  return scripts.forceUnlock.run(
    ioredisClient(raw),
    3,
    name,
    aux('redisson_lock_queue', name),
    aux('redisson_lock_timeout', name),
    'publish',
    `redisson_lock__channel:${tagged}`,
    `redisson_rwlock:${tagged}`,
    tagged,
    `redisson_lock__channel:${tagged}`,
  );
}
