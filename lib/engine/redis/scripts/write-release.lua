-- Ends an owner's write hold on a Redisson-compatible read-write lock, idempotently.
--
-- KEYS[1]  the lock hash N (see read-acquire.lua)
-- KEYS[2]  the unlock latch for this release request
--          (redisson_unlock_latch:{N}:<32 hex request id>, as Redisson 3.24+)
-- ARGV[1]  the lock's channel (redisson_rwlock:{N})
-- ARGV[2]  owner id '<client uuid>:<seq>' (the script appends ':write')
-- ARGV[3]  latch lifetime in milliseconds
--
-- Returns how many clients received the '1' published on ARGV[1] (Redisson's "wake every
-- waiter"), or nil when the owner's write field is absent (expired, deleted, never held): then
-- nothing is touched.
--
-- Without other fields the hash is deleted: the lock is free. With them (this owner downgraded:
-- it still reads) the mode becomes 'read' and the hash keeps its lease, which is never below a
-- read lease; waiting readers may now come in, so the wake-up is published in both cases.
--
-- The answer is kept in the latch, so the same request sent again returns it instead of nil.
if redis.call('hdel', KEYS[1], ARGV[2] .. ':write') == 0 then
  return tonumber(redis.call('get', KEYS[2]))
end
if redis.call('hlen', KEYS[1]) > 1 then
  redis.call('hset', KEYS[1], 'mode', 'read')
else
  redis.call('del', KEYS[1])
end
local listeners = redis.call('publish', ARGV[1], '1')
redis.call('set', KEYS[2], listeners, 'px', ARGV[3])
return listeners
