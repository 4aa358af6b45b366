-- Releases a Redisson-compatible fair lock held by one owner, idempotently, and tells the next
-- waiter in line (only that one).
--
-- KEYS[1]  the lock hash N
-- KEYS[2]  the queue of waiting owners (list redisson_lock_queue:{N})
-- KEYS[3]  the waiters' deadlines (zset redisson_lock_timeout:{N})
-- KEYS[4]  the unlock latch for this release request
--          (redisson_unlock_latch:{N}:<32 hex request id>, as Redisson 3.24+)
-- ARGV[1]  the waiters' channel prefix (redisson_lock__channel:{N}); a waiter's channel is
--          '<prefix>:<owner>'
-- ARGV[2]  owner id
-- ARGV[3]  latch lifetime in milliseconds
-- ARGV[4]  'spublish' (sharded pub/sub: Redis Cluster with Redis >= 7, as Redisson in cluster
--          mode) or 'publish', as release.lua
-- The waiter's channel is named here, from the queue, so it cannot be declared in KEYS. It shares
-- N's cluster slot by construction (its '{N}' tag), and Redis serves a script's undeclared keys
-- of slots its node owns (scripts without a shebang may), so SPUBLISH reaches the master of N's
-- slot, where the waiter's SSUBSCRIBE is: checked on a Redis 7 test cluster
-- (test/cluster/cluster-family.spec.ts). A channel of another slot would not be safe.
--
-- Returns how many clients received the '0' published on the queue head's channel (0 when nobody
-- is queued), or nil when the owner field is absent (the lock expired or was deleted): then
-- nothing is touched.
--
-- Waiters past their deadline (Redis TIME, see fair-acquire.lua) are dropped before the head is
-- chosen, so a dead waiter is not told. Re-entry is counted in the process (count 1), so one HDEL
-- frees the lock. The answer is kept in the latch, so the same request sent again returns it.
if redis.call('hdel', KEYS[1], ARGV[2]) == 0 then
  return tonumber(redis.call('get', KEYS[4]))
end
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
local listeners = 0
if head then
  listeners = redis.call(ARGV[4], ARGV[1] .. ':' .. head, '0')
end
redis.call('set', KEYS[4], listeners, 'px', ARGV[3])
return listeners
