-- Releases a Redisson-compatible fair lock held by one owner, idempotently, and tells the next
-- waiter in line (only that one), or, with nobody queued, the plain lock's waiters.
--
-- KEYS[1]  the lock hash N
-- KEYS[2]  the queue of waiting owners (list redisson_lock_queue:{N})
-- KEYS[3]  the waiters' deadlines (zset redisson_lock_timeout:{N})
-- KEYS[4]  the unlock latch for this release request
--          (redisson_unlock_latch:{N}:<32 hex request id>, as Redisson 3.24+)
-- KEYS[5]  the queue's turn (string redisson_lock_timeout:{N}:turn, see fair-acquire.lua)
-- ARGV[1]  the waiters' channel prefix (redisson_lock__channel:{N}), which is also the plain
--          lock's channel; a waiter's channel is '<prefix>:<owner>'
-- ARGV[2]  owner id
-- ARGV[3]  latch lifetime in milliseconds
-- ARGV[4]  'spublish' (sharded pub/sub: Redis Cluster with Redis >= 7, as Redisson in cluster
--          mode) or 'publish', as release.lua
-- ARGV[5]  place timeout in ms (fairQueueTimeout, see fair-acquire.lua)
-- ARGV[6]  '1' when the release undoes the owner's grant (too few replicas acknowledged it): the
--          owner goes back to the head of the queue, with a deadline of now + ARGV[5]
-- The channels are named here, from the queue, so they cannot be declared in KEYS. They share
-- N's cluster slot by construction (their '{N}' tag), and Redis serves a script's undeclared keys
-- of slots its node owns (scripts without a shebang may), so SPUBLISH reaches the master of N's
-- slot, where the waiter's SSUBSCRIBE is: checked on a Redis 7 test cluster
-- (test/stores/redis/cluster/cluster-family.spec.ts). A channel of another slot would not be safe.
--
-- Returns how many clients received the '0' published on the queue head's channel (on the plain
-- channel when nobody is queued), or nil when the owner field is absent (the lock expired or was
-- deleted): then nothing is touched.
--
-- The turn comes now: when it was expected later, the turn and every deadline move back by as
-- much (see fair-acquire.lua). Queue heads past their deadline (Redis TIME) or without one are
-- dropped before the head is chosen, so a dead waiter is not told. The head told gets a deadline of at
-- most now + ARGV[5]: its turn has come, and a dead one (its process gone, or frozen) costs the
-- queue at most that. With nobody queued, '0' goes to the plain lock's channel: plain, group and
-- Redisson RLock waiters of the same name wait there. Re-entry is counted in the process (count
-- 1), so one HDEL frees the lock. The answer is kept in the latch, so the same request sent again
-- returns it. The queue, the deadline set and the turn keep a TTL, as in fair-acquire.lua.
if redis.call('hdel', KEYS[1], ARGV[2]) == 0 then
  return tonumber(redis.call('get', KEYS[4]))
end
local t = redis.call('time')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local place = tonumber(ARGV[5])
if redis.call('exists', KEYS[2]) == 0 and ARGV[6] ~= '1' then
  local listeners = redis.call(ARGV[4], ARGV[1], '0')
  redis.call('del', KEYS[3], KEYS[5])
  redis.call('set', KEYS[4], listeners, 'px', ARGV[3])
  return listeners
end
local turn = tonumber(redis.call('get', KEYS[5]))
if turn and turn > now then
  for _, waiter in ipairs(redis.call('zrange', KEYS[3], 0, -1)) do
    redis.call('zincrby', KEYS[3], now - turn, waiter)
  end
end
redis.call('set', KEYS[5], now)
if ARGV[6] == '1' then
  redis.call('lrem', KEYS[2], 0, ARGV[2])
  redis.call('lpush', KEYS[2], ARGV[2])
  redis.call('zadd', KEYS[3], now + place, ARGV[2])
end
local head = redis.call('lindex', KEYS[2], 0)
while head do
  local deadline = redis.call('zscore', KEYS[3], head)
  if deadline and tonumber(deadline) > now then
    break
  end
  redis.call('lpop', KEYS[2])
  redis.call('zrem', KEYS[3], head)
  head = redis.call('lindex', KEYS[2], 0)
end
local listeners
if head then
  listeners = redis.call(ARGV[4], ARGV[1] .. ':' .. head, '0')
  if tonumber(redis.call('zscore', KEYS[3], head)) > now + place then
    redis.call('zadd', KEYS[3], now + place, head)
  end
  local last = redis.call('zrange', KEYS[3], -1, -1, 'withscores')
  local ttl = 300000 + math.max(0, math.floor(tonumber(last[2]) - now))
  redis.call('pexpire', KEYS[2], ttl)
  redis.call('pexpire', KEYS[3], ttl)
  redis.call('pexpire', KEYS[5], ttl)
else
  listeners = redis.call(ARGV[4], ARGV[1], '0')
  redis.call('del', KEYS[3], KEYS[5])
end
redis.call('set', KEYS[4], listeners, 'px', ARGV[3])
return listeners
