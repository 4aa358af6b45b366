-- Takes a Redisson-compatible fair lock (RFairLock layout) for one owner, in queue order.
--
-- KEYS[1]  the lock hash N: field = owner id, value = hold count
-- KEYS[2]  the queue of waiting owners (list redisson_lock_queue:{N}), head first
-- KEYS[3]  the waiters' deadlines (zset redisson_lock_timeout:{N}, score = absolute ms)
-- ARGV[1]  lease in milliseconds
-- ARGV[2]  owner id '<client uuid>:<seq>', the same for every attempt of one acquisition
-- ARGV[3]  place timeout in ms (fairQueueTimeout): how long past its expected turn a waiter keeps
--          its place without coming back
-- ARGV[4]  '1' to join the queue when refused; '0' for a single attempt that never queues
-- ARGV[5]  the waiters' channel prefix (redisson_lock__channel:{N}); a waiter's channel is
--          '<prefix>:<owner>'
-- ARGV[6]  'spublish' (sharded pub/sub: Redis Cluster with Redis >= 7) or 'publish', as
--          release.lua; the head's channel is named here, undeclared (see fair-release.lua)
-- Names 'prefix:{N}' follow Redisson's rule: 'prefix:N' when N already contains '{', so every key
-- shares N's cluster slot.
--
-- Returns one integer:
--   0     granted: the lock was free and nobody is queued, or the caller is the queue's head
--   <= -1 refused; -2 - value is how long to wait before trying again, in ms, unless woken on the
--         caller's channel first: the holder's PTTL when the caller is (or would be) the head,
--         else the time left until the deadline of the waiter ahead of it. -1 means a holder
--         without a lease (or, the lock being free, a waiter ahead that has no deadline).
--
-- Time is Redis' clock (TIME), not the caller's (Redisson passes its client's): one clock for
-- every process of ours, so one host's skew cannot purge another's waiters, and no caller can
-- pass a wrong time. Deadlines are epoch milliseconds as Redisson's, which compares them with its
-- own clock. TIME before writes needs effects replication (the default since Redis 5; acquire.lua
-- relies on it too).
--
-- A refused waiter's deadline becomes (at least) the end of that wait plus ARGV[3], so a live
-- waiter that comes back when told keeps its place however long the holder holds. Waiters past
-- their deadline, and queue heads without one, are dead: each fair script drops them before
-- choosing a head; when that leaves a new head and the lock is free, the head is told. A resent
-- acquire of the holder only renews the lease (the count stays 1).
local t = redis.call('time')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local owner = ARGV[2]

local before = redis.call('lindex', KEYS[2], 0)
for _, waiter in ipairs(redis.call('zrangebyscore', KEYS[3], '-inf', now)) do
  redis.call('lrem', KEYS[2], 0, waiter)
end
redis.call('zremrangebyscore', KEYS[3], '-inf', now)
local head = redis.call('lindex', KEYS[2], 0)
while head and not redis.call('zscore', KEYS[3], head) do
  redis.call('lpop', KEYS[2])
  head = redis.call('lindex', KEYS[2], 0)
end

local pttl = redis.call('pttl', KEYS[1])
if pttl == -2 then
  if not head or head == owner then
    if head then
      redis.call('lpop', KEYS[2])
    end
    redis.call('zrem', KEYS[3], owner)
    redis.call('hset', KEYS[1], owner, 1)
    redis.call('pexpire', KEYS[1], ARGV[1])
    return 0
  end
  if head ~= before then
    redis.call(ARGV[6], ARGV[5] .. ':' .. head, '0')
  end
elseif redis.call('hexists', KEYS[1], owner) == 1 then
  redis.call('pexpire', KEYS[1], ARGV[1])
  return 0
end

local ahead, queued = nil, false
for _, waiter in ipairs(redis.call('lrange', KEYS[2], 0, -1)) do
  if waiter == owner then
    queued = true
    break
  end
  ahead = waiter
end
local wait = math.max(pttl, -1)
if ahead then
  local deadline = redis.call('zscore', KEYS[3], ahead)
  if deadline then
    wait = tonumber(deadline) - now
  end
end
if queued or ARGV[4] == '1' then
  local deadline = now + math.max(wait, 0) + tonumber(ARGV[3])
  local current = redis.call('zscore', KEYS[3], owner)
  if not current or tonumber(current) < deadline then
    redis.call('zadd', KEYS[3], deadline, owner)
  end
  if not queued then
    redis.call('rpush', KEYS[2], owner)
  end
end
return -2 - wait
