--!df flags=allow-undeclared-keys
-- Ends an owner's write hold on a Redisson-compatible read-write lock, idempotently.
--
-- KEYS[1]  the lock hash N (see read-acquire.lua)
-- KEYS[2]  the unlock latch for this release request
--          (redisson_unlock_latch:{N}:<32 hex request id>, as Redisson 3.24+)
-- KEYS[3]  with 'spublish': the lock's channel (as ARGV[1]), declared as a key so that it lies in
--          N's cluster slot, where SPUBLISH must send it (as release.lua)
-- ARGV[1]  with 'publish': the lock's channel (redisson_rwlock:{N}), not declared as a key (as
--          release.lua); '' with 'spublish'
-- ARGV[2]  owner id '<client uuid>:<seq>' (the script appends ':write')
-- ARGV[3]  latch lifetime in milliseconds
-- ARGV[4]  'spublish' (sharded pub/sub: Redis Cluster with Redis >= 7, as Redisson in cluster
--          mode) or 'publish', as release.lua
--
-- Returns how many clients received the '1' published on the lock's channel (Redisson's "wake every
-- waiter"), or nil when the owner's write field is absent (expired, deleted, never held): then
-- nothing is touched.
--
-- Without other fields the hash is deleted: the lock is free. With them (this owner downgraded:
-- it still reads) the mode becomes 'read' and the hash keeps its lease, which is never below a
-- read lease; waiting readers may now come in, so the wake-up is published in both cases.
--
-- The answer is kept in the latch, so the same request sent again returns it instead of nil.
--
-- A downgraded write past its end is ended first (endWrite, end-write.part.lua): its release
-- then finds nothing (nil). A live one's lease key goes with its field.
local time = redis.call('time')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
-- P, the lease keys' prefix: '{N}', or N itself when N contains '{' (Redisson's suffixName).
local prefix = KEYS[1]:find('{', 1, true) and KEYS[1] or ('{' .. KEYS[1] .. '}')

-- @include end-write.part.lua

endWrite(KEYS[1], prefix, now)
if redis.call('hdel', KEYS[1], ARGV[2] .. ':write') == 0 then
  return tonumber(redis.call('get', KEYS[2]))
end
redis.call('del', prefix .. ':' .. ARGV[2] .. ':write:rwlock_timeout:1')
if redis.call('hlen', KEYS[1]) > 1 then
  redis.call('hset', KEYS[1], 'mode', 'read')
else
  redis.call('del', KEYS[1])
end
local listeners = redis.call(ARGV[4], KEYS[3] or ARGV[1], '1')
redis.call('set', KEYS[2], listeners, 'px', ARGV[3])
return listeners
