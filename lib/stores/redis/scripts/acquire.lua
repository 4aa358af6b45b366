-- Takes a Redisson-compatible reentrant lock (RLock layout) for one owner: Redisson's own
-- acquire (tryLockInnerAsync) with the hold count kept at 1. Fencing: acquire-fenced.lua.
--
-- KEYS[1]  the lock hash: field = owner id, value = hold count
-- ARGV[1]  lease in milliseconds (PEXPIRE of the hash)
-- ARGV[2]  owner field '<client uuid>:<owner id>'
--
-- Returns one integer (cheaper to build and parse than an array):
--   0     the caller now owns the lock
--   <= -1 another owner holds it; the holder's PTTL is -2 - value (so -1 means a lock without
--         a lease, PTTL -1)
--
-- Re-entry inside one process never reaches Redis, so an owner field that already exists can
-- only be this same acquire sent again (ioredis resends unanswered commands after a
-- reconnect): it keeps the count at 1 and only renews the lease, so one release frees it.
local pttl = redis.call('pttl', KEYS[1])
if pttl == -2 then
  redis.call('hset', KEYS[1], ARGV[2], 1)
elseif redis.call('hexists', KEYS[1], ARGV[2]) == 0 then
  return -2 - pttl
end
redis.call('pexpire', KEYS[1], ARGV[1])
return 0
