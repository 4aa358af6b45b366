import { prefixName, RedissonClientSide } from './redisson-side';

/**
 * A stand-in for a Java service using Redisson's RLock and RFencedLock, to test that our plain and
 * fenced locks (and leader election on them) share a lock with Redisson's. Our own code, checked
 * line by line against the Lua in Redisson's RedissonLock (tryLockInnerAsync, unlockInnerAsync),
 * RedissonFencedLock (the token-returning tryLockInnerAsync) and RedissonBaseLock
 * (renewExpirationAsync) at redisson/redisson 66863978b4a9 (4.7.0-62, Aug 2026): owner
 * `<client uuid>:<thread id>`; re-entry counted in the hash (HINCRBY); the token counter
 * `redisson_lock_token:{name}` incremented by every fenced acquire, re-entries too; an unlock
 * that keeps a hold sets the lease of the thread's last explicit acquire (the watchdog's 30 s
 * without one), publishes 0 on `redisson_lock__channel:{name}` when it frees the lock, and keeps
 * its answer in the unlock latch. Not modelled: waiting (see RedissonSide.waitFor), the watchdog's
 * timer (renew() is one renewal), forceUnlock, sharded pub/sub (SPUBLISH).
 */

// RedissonLock.tryLockInnerAsync. KEYS: hash. ARGV: lease, owner. Nil when granted, else the PTTL.
const LOCK = `
if redis.call('exists', KEYS[1]) == 0 or redis.call('hexists', KEYS[1], ARGV[2]) == 1 then
  redis.call('hincrby', KEYS[1], ARGV[2], 1)
  redis.call('pexpire', KEYS[1], ARGV[1])
  return nil
end
return redis.call('pttl', KEYS[1])`;

// RedissonFencedLock.tryLockInnerAsync (token-returning). KEYS: hash, token counter. ARGV: lease,
// owner. {-1, token} when granted, else {PTTL, -1}.
const FENCED_LOCK = `
if redis.call('exists', KEYS[1]) == 0 or redis.call('hexists', KEYS[1], ARGV[2]) == 1 then
  local token = redis.call('incr', KEYS[2])
  redis.call('hincrby', KEYS[1], ARGV[2], 1)
  redis.call('pexpire', KEYS[1], ARGV[1])
  return {-1, token}
end
return {redis.call('pttl', KEYS[1]), -1}`;

// RedissonLock.unlockInnerAsync. KEYS: hash, channel, latch. ARGV: '0', lease, owner, latch ms.
// 1 released, 0 still held, nil not the owner.
const UNLOCK = `
local latched = redis.call('get', KEYS[3])
if latched then return tonumber(latched) end
if redis.call('hexists', KEYS[1], ARGV[3]) == 0 then return nil end
if redis.call('hincrby', KEYS[1], ARGV[3], -1) > 0 then
  redis.call('pexpire', KEYS[1], ARGV[2])
  redis.call('set', KEYS[3], 0, 'px', ARGV[4])
  return 0
end
redis.call('del', KEYS[1])
redis.call('publish', KEYS[2], ARGV[1])
redis.call('set', KEYS[3], 1, 'px', ARGV[4])
return 1`;

// RedissonBaseLock.renewExpirationAsync (one watchdog renewal). KEYS: hash. ARGV: lease, owner.
const RENEW = `
if redis.call('hexists', KEYS[1], ARGV[2]) == 1 then
  redis.call('pexpire', KEYS[1], ARGV[1])
  return 1
end
return 0`;

/** One Redisson client (one UUID) on plain and fenced locks; threads are numbers. */
export class RedissonLockSide extends RedissonClientSide {
  /** RLock.tryLock without wait (lease <= 0: the watchdog's): nil when granted, else the PTTL. */
  lock(name: string, thread: number, lease: number): Promise<number | null> {
    const acquire = (ms: number) => this.eval(LOCK, [name], [ms, this.owner(thread)]);
    return this.acquired(`${name}:${thread}`, lease, acquire);
  }

  /**
   * RFencedLock.tryLockAndGetToken without wait (lease <= 0: the watchdog's): the token when
   * granted, null when another owner holds it.
   */
  async fencedLock(name: string, thread: number, lease: number): Promise<number | null> {
    const counter = prefixName('redisson_lock_token', name);
    let token: number | null = null;
    const ttl = await this.acquired(`${name}:${thread}`, lease, async (ms) => {
      const keys = [name, counter];
      const reply = (await this.client.eval(FENCED_LOCK, 2, ...keys, ms, this.owner(thread))) as [
        number,
        number,
      ];
      token = Number(reply[1]);
      return Number(reply[0]) === -1 ? null : Number(reply[0]);
    });
    return ttl === null ? token : null;
  }

  /** Unlocks one level of `thread`'s RLock or RFencedLock: 1 freed, 0 still held, null not held. */
  unlock(name: string, thread: number): Promise<number | null> {
    const channel = prefixName('redisson_lock__channel', name);
    const lock = `${name}:${thread}`;
    return this.unlocked(name, lock, (latch) =>
      this.eval(
        UNLOCK,
        [name, channel, latch],
        [0, this.leaseOf(lock), this.owner(thread), this.latchLease],
      ),
    );
  }

  /** One watchdog renewal of `thread`'s lock: 1 renewed, 0 not held. */
  async renew(name: string, thread: number): Promise<number> {
    const lease = this.leaseOf(`${name}:${thread}`);
    return Number(await this.eval(RENEW, [name], [lease, this.owner(thread)]));
  }
}
