-- Takes a Redisson-compatible reentrant lock (RLock layout) for one owner.
--
-- KEYS[1]  the lock hash: field = owner id, value = hold count
-- KEYS[2]  the fencing-token counter (redisson_lock_token:{name}, as RFencedLock uses)
-- ARGV[1]  lease in milliseconds (PEXPIRE of the hash)
-- ARGV[2]  owner field '<client uuid>:<owner id>'
-- ARGV[3]  '1' to issue a fencing token, '0' not to
--
-- Returns {1, token} when the caller now owns the lock (token 0 when none was asked for),
-- {0, pttl} when another owner holds it (pttl may be -1 for a lock without a lease).
--
-- Re-entry inside one process never reaches Redis, so an owner field that already exists can
-- only be this same acquire sent again (ioredis resends unanswered commands after a
-- reconnect): it keeps the count at 1 and only renews the lease, so one release frees it.
if redis.call('exists', KEYS[1]) == 0 then
  redis.call('hset', KEYS[1], ARGV[2], 1)
elseif redis.call('hexists', KEYS[1], ARGV[2]) == 0 then
  return {0, redis.call('pttl', KEYS[1])}
end
redis.call('pexpire', KEYS[1], ARGV[1])
local token = 0
if ARGV[3] == '1' then
  token = redis.call('incr', KEYS[2])
end
return {1, token}
