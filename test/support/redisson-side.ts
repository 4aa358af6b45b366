import { randomBytes, randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';

/**
 * A stand-in for a Java service using Redisson (3.44+) on read-write and fair locks, to test that
 * our scripts and Redisson's share a lock. Our own code, checked line by line against the Lua in
 * Redisson's RedissonReadLock, RedissonWriteLock, RedissonFairLock, RedissonLock and LockPubSub at
 * redisson/redisson 66863978b4a9 (4.7.0-62, Aug 2026): owner `<client uuid>:<thread id>`;
 * re-entry counted in Redis (HINCRBY), with one read lease key per re-entry level; a write
 * re-entry adds the lease to the PTTL; an unlock that keeps a hold sets the lease of the thread's
 * last explicit acquire (Redisson's internalLockLeaseTime, the watchdog's 30 s without one); fair
 * deadlines on the client's clock, shortened by the wait of every waiter served or giving up;
 * unlocks read and write the unlock latch, then delete it, as Redisson's unlockInnerAsync; waiting
 * as RedissonLock.tryLock waits (a fair waiter that times out must call fairGiveUp itself, as
 * Redisson's acquireFailed); one read-lock watchdog renewal on call (renewRead, as ReadLockTask).
 * Not modelled: the watchdog's timer, tryLock() without wait on a fair lock, forceUnlock, sharded
 * pub/sub (SPUBLISH), WAIT.
 */

/** Redisson's prefixName: `prefix:{name}`, or `prefix:name` when the name contains `{`. */
export const prefixName = (prefix: string, name: string) =>
  name.includes('{') ? `${prefix}:${name}` : `${prefix}:{${name}}`;

/** Redisson's suffixName: `{name}:suffix`, or `name:suffix` when the name contains `{`. */
export const suffixName = (name: string, suffix: string) =>
  name.includes('{') ? `${name}:${suffix}` : `{${name}}:${suffix}`;

// Answers a resent unlock from its latch (KEYS[LATCH]); `keep(answer)` stores an answer there.
const LATCHED = (latch: number) => `
local latched = redis.call('get', KEYS[${latch}])
if latched then return tonumber(latched) end
local function keep(answer)
  redis.call('set', KEYS[${latch}], answer, 'px', ARGV[#ARGV])
  return answer
end`;

// Opens a read or write unlock: answers a resent one from its latch (KEYS[latch]); with no lock,
// publishes `message` on ARGV[1], latches 1 and answers nil; else reads the lock's `mode`.
const RW_UNLOCK = (latch: number, message: string) => `${LATCHED(latch)}
local mode = redis.call('hget', KEYS[1], 'mode')
if not mode then
  redis.call('publish', ARGV[1], '${message}')
  redis.call('set', KEYS[${latch}], 1, 'px', ARGV[#ARGV])
  return nil
end`;

// KEYS: hash, '<P>:<owner>:rwlock_timeout'. ARGV: lease, owner. Nil when granted, else the PTTL.
const READ_LOCK = `
local mode = redis.call('hget', KEYS[1], 'mode')
if not mode then
  redis.call('hset', KEYS[1], 'mode', 'read', ARGV[2], 1)
  redis.call('set', KEYS[2] .. ':1', 1, 'px', ARGV[1])
  redis.call('pexpire', KEYS[1], ARGV[1])
  return nil
end
if mode == 'read' or (mode == 'write' and redis.call('hexists', KEYS[1], ARGV[2] .. ':write') == 1) then
  local level = redis.call('hincrby', KEYS[1], ARGV[2], 1)
  redis.call('set', KEYS[2] .. ':' .. level, 1, 'px', ARGV[1])
  redis.call('pexpire', KEYS[1], math.max(redis.call('pttl', KEYS[1]), tonumber(ARGV[1])))
  return nil
end
return redis.call('pttl', KEYS[1])`;

// KEYS: hash, own timeout prefix, P, latch. ARGV: channel, owner, latch ms. 1 freed, 0 still
// held, nil not owner.
const READ_UNLOCK = `${RW_UNLOCK(4, '0')}
if redis.call('hexists', KEYS[1], ARGV[2]) == 0 then return nil end
local level = redis.call('hincrby', KEYS[1], ARGV[2], -1)
if level == 0 then redis.call('hdel', KEYS[1], ARGV[2]) end
redis.call('del', KEYS[2] .. ':' .. (level + 1))
if redis.call('hlen', KEYS[1]) > 1 then
  local longest = -3
  local all = redis.call('hgetall', KEYS[1])
  for f = 1, #all, 2 do
    local count = tonumber(all[f + 1])
    if count then
      for i = count, 1, -1 do
        longest = math.max(longest, redis.call('pttl', KEYS[3] .. ':' .. all[f] .. ':rwlock_timeout:' .. i))
      end
    end
  end
  if longest > 0 then redis.call('pexpire', KEYS[1], longest) return keep(0) end
  if mode == 'write' then return keep(0) end
end
redis.call('del', KEYS[1])
redis.call('publish', ARGV[1], '0')
return keep(1)`;

// KEYS: hash. ARGV: lease, owner. Nil when granted, else the PTTL.
const WRITE_LOCK = `
local field = ARGV[2] .. ':write'
local mode = redis.call('hget', KEYS[1], 'mode')
if not mode then
  redis.call('hset', KEYS[1], 'mode', 'write', field, 1)
  redis.call('pexpire', KEYS[1], ARGV[1])
  return nil
end
if mode == 'write' and redis.call('hexists', KEYS[1], field) == 1 then
  redis.call('hincrby', KEYS[1], field, 1)
  redis.call('pexpire', KEYS[1], redis.call('pttl', KEYS[1]) + tonumber(ARGV[1]))
  return nil
end
return redis.call('pttl', KEYS[1])`;

// KEYS: hash, latch. ARGV: channel, lease, owner, latch ms. 1 released, 0 still held, nil not
// owner. No message when a downgraded writer's readers remain.
const WRITE_UNLOCK = `${RW_UNLOCK(2, '1')}
local field = ARGV[3] .. ':write'
if mode ~= 'write' or redis.call('hexists', KEYS[1], field) == 0 then return nil end
if redis.call('hincrby', KEYS[1], field, -1) > 0 then
  redis.call('pexpire', KEYS[1], ARGV[2])
  return keep(0)
end
redis.call('hdel', KEYS[1], field)
if redis.call('hlen', KEYS[1]) == 1 then
  redis.call('del', KEYS[1])
  redis.call('publish', ARGV[1], '1')
else
  redis.call('hset', KEYS[1], 'mode', 'read')
end
return keep(1)`;

// Drops queue heads whose deadline passed (Redisson looks at the head only). KEYS[2] queue,
// KEYS[3] deadlines; 'now' is the client's clock.
const DROP_STALE_HEADS = `
while true do
  local head = redis.call('lindex', KEYS[2], 0)
  if not head then break end
  local deadline = redis.call('zscore', KEYS[3], head)
  if not deadline or tonumber(deadline) > now then break end
  redis.call('zrem', KEYS[3], head)
  redis.call('lpop', KEYS[2])
end`;

// KEYS: hash, queue, deadlines. ARGV: lease, owner, wait, now. Nil when granted, else a TTL.
const FAIR_TRY_LOCK = `
local now, wait = tonumber(ARGV[4]), tonumber(ARGV[3])
${DROP_STALE_HEADS}
if redis.call('exists', KEYS[1]) == 0 and (redis.call('exists', KEYS[2]) == 0 or redis.call('lindex', KEYS[2], 0) == ARGV[2]) then
  redis.call('lpop', KEYS[2])
  redis.call('zrem', KEYS[3], ARGV[2])
  for _, waiter in ipairs(redis.call('zrange', KEYS[3], 0, -1)) do
    redis.call('zincrby', KEYS[3], -wait, waiter)
  end
  redis.call('hset', KEYS[1], ARGV[2], 1)
  redis.call('pexpire', KEYS[1], ARGV[1])
  return nil
end
if redis.call('hexists', KEYS[1], ARGV[2]) == 1 then
  redis.call('hincrby', KEYS[1], ARGV[2], 1)
  redis.call('pexpire', KEYS[1], ARGV[1])
  return nil
end
if redis.call('zscore', KEYS[3], ARGV[2]) then return math.max(0, redis.call('pttl', KEYS[1])) end
local last = redis.call('lindex', KEYS[2], -1)
local ttl = redis.call('pttl', KEYS[1])
if last and last ~= ARGV[2] and redis.call('zscore', KEYS[3], last) then
  ttl = tonumber(redis.call('zscore', KEYS[3], last)) - now
end
if redis.call('zadd', KEYS[3], ttl + wait + now, ARGV[2]) == 1 then redis.call('rpush', KEYS[2], ARGV[2]) end
return ttl`;

// KEYS: hash, queue, deadlines, latch. ARGV: channel prefix, lease, owner, now, latch ms.
// 1 / 0 / nil as unlock.
const FAIR_UNLOCK = `${LATCHED(4)}
local now = tonumber(ARGV[4])
${DROP_STALE_HEADS}
local function tellHead()
  local head = redis.call('lindex', KEYS[2], 0)
  if head then redis.call('publish', ARGV[1] .. ':' .. head, '0') end
end
if redis.call('exists', KEYS[1]) == 0 then tellHead() return keep(1) end
if redis.call('hexists', KEYS[1], ARGV[3]) == 0 then return nil end
if redis.call('hincrby', KEYS[1], ARGV[3], -1) > 0 then
  redis.call('pexpire', KEYS[1], ARGV[2])
  return keep(0)
end
redis.call('del', KEYS[1])
tellHead()
return keep(1)`;

// KEYS: queue, deadlines. ARGV: owner, wait. Leaves the queue; those behind move up by 'wait'.
const FAIR_GIVE_UP = `
local behind = false
for _, waiter in ipairs(redis.call('lrange', KEYS[1], 0, -1)) do
  if behind then redis.call('zincrby', KEYS[2], -tonumber(ARGV[2]), waiter) end
  if waiter == ARGV[1] then behind = true end
end
redis.call('zrem', KEYS[2], ARGV[1])
redis.call('lrem', KEYS[1], 0, ARGV[1])`;

// KEYS: hash, P. ARGV: lease, then the owners of this client's read holds. 1 renewed, 0 none
// left. Every lease key of a live owner and the hash get the lease: the hash's PTTL is set, not
// raised.
const RENEW_READ = `
local alive = false
for a = 2, #ARGV do
  local count = redis.call('hget', KEYS[1], ARGV[a])
  if count then
    alive = true
    for i = tonumber(count), 1, -1 do
      redis.call('pexpire', KEYS[2] .. ':' .. ARGV[a] .. ':rwlock_timeout:' .. i, ARGV[1])
    end
  end
end
if not alive then return 0 end
redis.call('pexpire', KEYS[1], ARGV[1])
return 1`;

/** What ended a wait: the first attempt, a message on the channel, or the TTL cap running out. */
export type Wake = 'first' | 'message' | 'ttl' | 'timeout';

/**
 * What every Redisson client stand-in shares: its UUID and owner ids, the last explicit lease per
 * lock object (Redisson's internalLockLeaseTime), and acquires and unlocks as RedissonBaseLock
 * runs them. Threads are numbers.
 */
export abstract class RedissonClientSide {
  readonly id = randomUUID();
  /** Redisson's lockWatchdogTimeout: the lease without an explicit one. */
  readonly watchdogLease = 30_000;
  /** How long an unlock's latch lives, ms (Redisson: (timeout + retry delay) x retry attempts). */
  readonly latchLease = 10_000;
  /** Redisson's internalLockLeaseTime per lock object (kind, name, thread): the last explicit lease. */
  private readonly leases = new Map<string, number>();

  constructor(protected readonly client: Redis) {}

  owner(thread: number): string {
    return `${this.id}:${thread}`;
  }

  /** The lease an acquire or unlock of `lock` sends without an explicit one. */
  protected leaseOf(lock: string): number {
    return this.leases.get(lock) ?? this.watchdogLease;
  }

  /** An acquire as RedissonLock.tryAcquireAsync: an explicit lease becomes internalLockLeaseTime. */
  protected async acquired(
    lock: string,
    lease: number,
    acquire: (lease: number) => Promise<number | null>,
  ): Promise<number | null> {
    const ttl = await acquire(lease > 0 ? lease : this.leaseOf(lock));
    if (ttl === null && lease > 0) this.leases.set(lock, lease);
    return ttl;
  }

  /**
   * An unlock as RedissonBaseLock.unlockInnerAsync: a fresh 32-hex request id names the latch,
   * deleted after the reply; a result other than "still held" (0) resets internalLockLeaseTime.
   */
  protected async unlocked(
    name: string,
    lock: string,
    run: (latch: string) => Promise<number | null>,
  ): Promise<number | null> {
    const latch = `${prefixName('redisson_unlock_latch', name)}:${randomBytes(16).toString('hex')}`;
    const result = await run(latch);
    await this.client.del(latch);
    if (result !== 0) this.leases.delete(lock);
    return result;
  }

  /** Runs `script`: its reply as a number, or null. */
  protected async eval(script: string, keys: string[], args: (string | number)[]) {
    const reply = await this.client.eval(script, keys.length, ...keys, ...args);
    return reply === null ? null : Number(reply);
  }
}

/** One Redisson client (one UUID) on read-write and fair locks; threads are numbers. */
export class RedissonSide extends RedissonClientSide {
  /** Lease <= 0: the watchdog's (not renewed here). */
  readLock(name: string, thread: number, lease: number): Promise<number | null> {
    const prefix = `${suffixName(name, this.owner(thread))}:rwlock_timeout`;
    const acquire = (ms: number) => this.eval(READ_LOCK, [name, prefix], [ms, this.owner(thread)]);
    return this.acquired(`r:${name}:${thread}`, lease, acquire);
  }

  readUnlock(name: string, thread: number): Promise<number | null> {
    const prefix = `${suffixName(name, this.owner(thread))}:rwlock_timeout`;
    const keyPrefix = prefix.split(`:${this.owner(thread)}`)[0];
    const channel = prefixName('redisson_rwlock', name);
    return this.unlocked(name, `r:${name}:${thread}`, (latch) =>
      this.eval(
        READ_UNLOCK,
        [name, prefix, keyPrefix, latch],
        [channel, this.owner(thread), this.latchLease],
      ),
    );
  }

  writeLock(name: string, thread: number, lease: number): Promise<number | null> {
    const acquire = (ms: number) => this.eval(WRITE_LOCK, [name], [ms, this.owner(thread)]);
    return this.acquired(`w:${name}:${thread}`, lease, acquire);
  }

  writeUnlock(name: string, thread: number): Promise<number | null> {
    const channel = prefixName('redisson_rwlock', name);
    const lock = `w:${name}:${thread}`;
    return this.unlocked(name, lock, (latch) =>
      this.eval(
        WRITE_UNLOCK,
        [name, latch],
        [channel, this.leaseOf(lock), this.owner(thread), this.latchLease],
      ),
    );
  }

  /** One watchdog renewal of this client's read holds of `threads` (Redisson's ReadLockTask). */
  renewRead(name: string, threads: number[], lease = this.watchdogLease): Promise<number | null> {
    const keyPrefix = name.includes('{') ? name : `{${name}}`;
    const owners = threads.map((thread) => this.owner(thread));
    return this.eval(RENEW_READ, [name, keyPrefix], [lease, ...owners]);
  }

  fairTryLock(name: string, thread: number, lease: number, wait: number): Promise<number | null> {
    const keys = [name, ...this.fairNames(name)];
    const acquire = (ms: number) =>
      this.eval(FAIR_TRY_LOCK, keys, [ms, this.owner(thread), wait, Date.now()]);
    return this.acquired(`f:${name}:${thread}`, lease, acquire);
  }

  fairUnlock(name: string, thread: number): Promise<number | null> {
    const channels = prefixName('redisson_lock__channel', name);
    const lock = `f:${name}:${thread}`;
    return this.unlocked(name, lock, (latch) => {
      const args = [channels, this.leaseOf(lock), this.owner(thread), Date.now(), this.latchLease];
      return this.eval(FAIR_UNLOCK, [name, ...this.fairNames(name), latch], args);
    });
  }

  async fairGiveUp(name: string, thread: number, wait: number): Promise<void> {
    await this.eval(FAIR_GIVE_UP, this.fairNames(name), [this.owner(thread), wait]);
  }

  /** The channel a fair waiter of `thread` listens on. */
  fairChannel(name: string, thread: number): string {
    return `${prefixName('redisson_lock__channel', name)}:${this.owner(thread)}`;
  }

  /**
   * Waits for a lock as RedissonLock.tryLock does: one attempt, then SUBSCRIBE to `channel` and
   * attempt again after each message or when the TTL the attempt returned runs out (capped by
   * the time left). Resolves with what woke the successful attempt, or 'timeout'. `onWait` is
   * called each time it starts waiting (subscribed, last attempt refused).
   */
  async waitFor(
    channel: string,
    attempt: () => Promise<number | null>,
    timeout: number,
    onWait: () => void = () => undefined,
  ): Promise<Wake> {
    if ((await attempt()) === null) return 'first';
    const deadline = Date.now() + timeout;
    const sub = this.client.duplicate();
    try {
      await sub.subscribe(channel);
      let woke: Wake = 'first';
      for (;;) {
        const ttl = await attempt();
        if (ttl === null) return woke;
        const left = deadline - Date.now();
        if (left <= 0) return 'timeout';
        woke = await new Promise<Wake>((resolve) => {
          const onMessage = (from: string) => {
            if (from !== channel) return;
            clearTimeout(timer);
            sub.off('message', onMessage);
            resolve('message');
          };
          const timer = setTimeout(
            () => {
              sub.off('message', onMessage);
              resolve('ttl');
            },
            ttl >= 0 && ttl < left ? ttl : left,
          );
          sub.on('message', onMessage);
          onWait();
        });
      }
    } finally {
      sub.disconnect();
    }
  }

  private fairNames(name: string): string[] {
    return [prefixName('redisson_lock_queue', name), prefixName('redisson_lock_timeout', name)];
  }
}
