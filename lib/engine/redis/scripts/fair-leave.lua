-- Takes a waiter that gives up out of a Redisson-compatible fair lock's queue.
--
-- KEYS[1]  the lock hash N
-- KEYS[2]  the queue of waiting owners (list redisson_lock_queue:{N})
-- KEYS[3]  the waiters' deadlines (zset redisson_lock_timeout:{N})
-- ARGV[1]  the waiters' channel prefix (redisson_lock__channel:{N})
-- ARGV[2]  owner id of the waiter that leaves
-- ARGV[3]  'spublish' (sharded pub/sub: Redis Cluster with Redis >= 7) or 'publish', as
--          release.lua; the head's channel is named here, undeclared (see fair-release.lua)
--
-- Returns 1 when the owner was queued (it is not any more), 0 when it was not.
--
-- Waiters past their deadline (Redis TIME, see fair-acquire.lua) are dropped too. When the queue
-- then has a new head and the lock is free, the head is told on its channel: it may have been the
-- leaving waiter that a release had just told. The others' deadlines are left as they are.
local before = redis.call('lindex', KEYS[2], 0)
local left = redis.call('lrem', KEYS[2], 0, ARGV[2])
redis.call('zrem', KEYS[3], ARGV[2])
local t = redis.call('time')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
for _, waiter in ipairs(redis.call('zrangebyscore', KEYS[3], '-inf', now)) do
  redis.call('lrem', KEYS[2], 0, waiter)
end
redis.call('zremrangebyscore', KEYS[3], '-inf', now)
local head = redis.call('lindex', KEYS[2], 0)
while head and not redis.call('zscore', KEYS[3], head) do
  redis.call('lpop', KEYS[2])
  head = redis.call('lindex', KEYS[2], 0)
end
if head and head ~= before and redis.call('exists', KEYS[1]) == 0 then
  redis.call(ARGV[3], ARGV[1] .. ':' .. head, '0')
end
if left > 0 then
  return 1
end
return 0
