import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import { prefixName, suffixName } from './redisson-side';

/**
 * A stand-in for a Java service using Redisson's RPermitExpirableSemaphore, to test that our
 * semaphore scripts and Redisson's share permits. Our own code, checked against the Lua in
 * RedissonPermitExpirableSemaphore at redisson/redisson 66863978b4a9 (4.7.0-62, Aug 2026):
 * string N = available permits; zset `{N}:timeout` of held permits, member = the permit id's
 * 16 raw bytes (the id a Java caller sees is their hex), score = expiry in ms on the client's
 * clock (922337203685477 without lease); channel `redisson_sc:{N}`, a release publishes the new
 * count. Each call first takes back expired permits (INCRBY N by how many) and publishes the
 * new count when it is above 0. Acquires of one permit only.
 */

/** Redisson's score of a permit without lease (nonExpirableTimeout). */
export const NO_LEASE = 922337203685477;

// Takes back at most ARGV[limit] expired permits (all when 'limit' is -1). KEYS: N, zset,
// channel; 'now' is the client's clock.
const TAKE_BACK_EXPIRED = (limit: string) => `
local expired = redis.call('zrangebyscore', KEYS[2], 0, now, 'limit', 0, ${limit})
if #expired > 0 then
  redis.call('zrem', KEYS[2], unpack(expired))
  local available = redis.call('incrby', KEYS[1], #expired)
  if tonumber(available) > 0 then redis.call('publish', KEYS[3], available) end
end`;

// KEYS: N, zset, channel. ARGV: expiry, now, permit id (raw). 'OK' when granted, else
// ':<score>' of the permit that expires first (when it has a lease), else nil.
const TRY_ACQUIRE = `
local now = tonumber(ARGV[2])
${TAKE_BACK_EXPIRED('1')}
local available = redis.call('get', KEYS[1])
if available and tonumber(available) >= 1 then
  redis.call('decrby', KEYS[1], 1)
  redis.call('zadd', KEYS[2], ARGV[1], ARGV[3])
  local ttl = redis.call('pttl', KEYS[1])
  if ttl > 0 then redis.call('pexpire', KEYS[2], ttl) end
  return 'OK'
end
local first = redis.call('zrange', KEYS[2], 0, 0, 'withscores')
if first[1] and first[2] ~= '${NO_LEASE}' then return ':' .. first[2] end
return nil`;

// KEYS: N, channel, zset. ARGV: permit id (raw), now. 1 released, 0 not held or expired.
const TRY_RELEASE = `
local expiry = redis.call('zscore', KEYS[3], ARGV[1])
if redis.call('zrem', KEYS[3], ARGV[1]) ~= 1 then return 0 end
redis.call('publish', KEYS[2], redis.call('incrby', KEYS[1], 1))
if tonumber(expiry) <= tonumber(ARGV[2]) then return 0 end
return 1`;

// KEYS: N, zset, channel. ARGV: now. The available count, expired permits taken back first.
const AVAILABLE = `
local now = tonumber(ARGV[1])
${TAKE_BACK_EXPIRED('-1')}
return tonumber(redis.call('get', KEYS[1]) or 0)`;

// KEYS: N, channel. ARGV: permits. 1 when N was missing (now set), else 0.
const TRY_SET_PERMITS = `
if redis.call('get', KEYS[1]) then return 0 end
redis.call('set', KEYS[1], ARGV[1])
redis.call('publish', KEYS[2], ARGV[1])
return 1`;

/** One Redisson client's RPermitExpirableSemaphore calls on semaphores by name. */
export class RedissonSemaphore {
  constructor(private readonly client: Redis) {}

  /** The zset of held permits. */
  static timeoutName(name: string): string {
    return suffixName(name, 'timeout');
  }

  /** The channel releases are announced on. */
  static channelName(name: string): string {
    return prefixName('redisson_sc', name);
  }

  async trySetPermits(name: string, permits: number): Promise<boolean> {
    const keys = [name, RedissonSemaphore.channelName(name)];
    return (await this.client.eval(TRY_SET_PERMITS, 2, ...keys, permits)) === 1;
  }

  /**
   * tryAcquire(leaseTime) without waiting: the permit id (32 hex) when granted, else null and,
   * in `nearest`, the expiry of the permit that expires first (null when none has a lease).
   */
  async tryAcquire(
    name: string,
    lease: number,
  ): Promise<{ id: string | null; nearest: number | null }> {
    const id = randomBytes(16);
    const now = Date.now();
    const expiry = lease > 0 ? now + lease : NO_LEASE;
    const reply = await this.client.eval(TRY_ACQUIRE, 3, ...this.keys(name), expiry, now, id);
    if (reply === 'OK') return { id: id.toString('hex'), nearest: null };
    return { id: null, nearest: typeof reply === 'string' ? Number(reply.slice(1)) : null };
  }

  /** tryRelease(permitId). */
  async tryRelease(name: string, id: string): Promise<boolean> {
    const keys = [name, RedissonSemaphore.channelName(name), RedissonSemaphore.timeoutName(name)];
    const reply = await this.client.eval(
      TRY_RELEASE,
      3,
      ...keys,
      Buffer.from(id, 'hex'),
      Date.now(),
    );
    return reply === 1;
  }

  /** availablePermits(). */
  async availablePermits(name: string): Promise<number> {
    return Number(await this.client.eval(AVAILABLE, 3, ...this.keys(name), Date.now()));
  }

  private keys(name: string): string[] {
    return [name, RedissonSemaphore.timeoutName(name), RedissonSemaphore.channelName(name)];
  }
}
