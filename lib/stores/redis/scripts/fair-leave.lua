-- Takes a waiter that gives up out of a Redisson-compatible fair lock's queue.
--
-- KEYS[1]  the lock hash N
-- KEYS[2]  the queue of waiting owners (list redisson_lock_queue:{N})
-- KEYS[3]  the waiters' deadlines (zset redisson_lock_timeout:{N})
-- KEYS[4]  the queue's turn (string redisson_lock_timeout:{N}:turn, see fair-acquire.lua)
-- ARGV[1]  the waiters' channel prefix (redisson_lock__channel:{N}), also the plain lock's
--          channel
-- ARGV[2]  owner id of the waiter that leaves
-- ARGV[3]  'spublish' (sharded pub/sub: Redis Cluster with Redis >= 7) or 'publish', as
--          release.lua; the channels are named here, undeclared (see fair-release.lua)
-- ARGV[4]  place timeout in ms (fairQueueTimeout, see fair-acquire.lua)
--
-- Returns 1 when the owner was queued (it is not any more), 0 when it was not.
--
-- The deadlines behind the leaver lose its wait (its deadline less the one ahead of it, or less
-- the turn), as Redisson's take the wait of a waiter that gives up off them (see
-- fair-acquire.lua). Queue heads past their deadline are dropped too.
-- When the lock is free and the queue then has a new head, the head is told on its channel (it
-- may have been the leaving waiter that a release had just told), its deadline at most
-- now + ARGV[4] as in fair-release.lua; when the queue is then empty, the plain lock's waiters
-- are told. The queue, the deadline set and the turn keep a TTL, as in fair-acquire.lua.
local t = redis.call('time')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local place = tonumber(ARGV[4])
local before = redis.call('lindex', KEYS[2], 0)
local mine = redis.call('zscore', KEYS[3], ARGV[2])
local wait, ahead = nil, redis.call('get', KEYS[4])
for _, waiter in ipairs(redis.call('lrange', KEYS[2], 0, -1)) do
  if wait and waiter ~= ARGV[2] then
    redis.call('zincrby', KEYS[3], -wait, waiter)
  elseif waiter == ARGV[2] and mine then
    wait = place
    if ahead then
      wait = math.max(0, tonumber(mine) - tonumber(ahead))
    end
  elseif not wait then
    ahead = redis.call('zscore', KEYS[3], waiter)
  end
end
local left = redis.call('lrem', KEYS[2], 0, ARGV[2])
redis.call('zrem', KEYS[3], ARGV[2])
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
local free = redis.call('exists', KEYS[1]) == 0
if head then
  if head ~= before and free then
    redis.call(ARGV[3], ARGV[1] .. ':' .. head, '0')
    if tonumber(redis.call('zscore', KEYS[3], head)) > now + place then
      redis.call('zadd', KEYS[3], now + place, head)
    end
  end
  local last = redis.call('zrange', KEYS[3], -1, -1, 'withscores')
  local ttl = 300000 + math.max(0, math.floor(tonumber(last[2]) - now))
  redis.call('pexpire', KEYS[2], ttl)
  redis.call('pexpire', KEYS[3], ttl)
  redis.call('pexpire', KEYS[4], ttl)
else
  redis.call('del', KEYS[3], KEYS[4])
  if before and free then
    redis.call(ARGV[3], ARGV[1], '0')
  end
end
if left > 0 then
  return 1
end
return 0
