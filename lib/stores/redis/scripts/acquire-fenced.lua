-- Takes a Redisson-compatible reentrant lock (RLock layout) for one owner and issues a fencing
-- token (Redisson's RFencedLock): acquire.lua plus the counter. Used when fencing is asked for.
--
-- KEYS[1]  the lock hash: field = owner id, value = hold count
-- KEYS[2]  the fencing-token counter (redisson_lock_token:{name}, as RFencedLock uses). It has
--          no TTL, as Redisson's: Redisson's INCR keeps whatever TTL a key has, so a counter that
--          expired under Java-only use would restart Java's tokens at 1. PERSIST also clears the
--          7-day TTL that earlier versions of this library set.
-- ARGV[1]  lease in milliseconds (PEXPIRE of the hash)
-- ARGV[2]  owner field '<client uuid>:<owner id>'
--
-- Returns one integer (cheaper to build and parse than an array):
--   >= 1  the caller now owns the lock; the value is its fencing token
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
local token = redis.call('incr', KEYS[2])
if token == 1 then
  -- A new counter, or one a restart without persistence (or a user's DEL) wiped: start
  -- it at Redis' clock in microseconds, so tokens still grow past every token issued before
  -- (a lock name is never acquired more than once per microsecond, and the server's clock does
  -- not step back by more than the time since the last token). Written as a decimal string:
  -- Lua would print a double this large in exponent form.
  local now = redis.call('time')
  local seed = now[1] .. string.format('%06d', now[2])
  redis.call('set', KEYS[2], seed)
  return tonumber(seed)
end
redis.call('persist', KEYS[2])
return token
