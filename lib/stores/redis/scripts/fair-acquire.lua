-- Takes a Redisson-compatible fair lock (RFairLock layout) for one owner, in queue order.
--
-- KEYS[1]  the lock hash N: field = owner id, value = hold count
-- KEYS[2]  the queue of waiting owners (list redisson_lock_queue:{N}), head first
-- KEYS[3]  the waiters' deadlines (zset redisson_lock_timeout:{N}, score = absolute ms)
-- KEYS[4]  the queue's turn (string redisson_lock_timeout:{N}:turn, ours, not Redisson's): when
--          the head's turn is expected (the holder's lease end, or when the lock was freed), ms
-- ARGV[1]  lease in milliseconds
-- ARGV[2]  owner id '<client uuid>:<seq>', the same for every attempt of one acquisition
-- ARGV[3]  place timeout in ms (fairQueueTimeout): how long past its turn a waiter keeps its
--          place without coming back
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
-- Deadlines follow Redisson's arithmetic, so that Redisson's scripts (which only read them: a
-- head past its deadline is dropped, a grant or a waiter that gives up takes its own wait off
-- the deadlines behind it) find a valid queue at every step: each waiter's deadline is the one
-- ahead of it plus its wait (ours: ARGV[3]), the head's the turn (KEYS[4]) plus its wait. What
-- Redisson does not do, ours do, so that deadlines follow the actual turns, not the expected ones:
--   * while the lock is held, an attempt moves the turn to the holder's lease end when that is
--     later (the holder renewed) and every deadline by as much; a grant moves the turn to the
--     new lease end and the deadlines behind it to match; a release moves them back to the
--     release's time. So they cannot drift under churn, and a waiter behind a Redisson waiter
--     keeps ARGV[3] past the turn when Redisson's grant takes that waiter's wait off;
--   * each attempt raises the caller's deadline to at least the one ahead plus ARGV[3] (at least
--     the holder's lease end plus ARGV[3] for the head) and never drops the caller: a live
--     waiter that comes back in time (ours do, every ARGV[3] / 3) keeps its place whatever the
--     others do;
--   * a head told its turn (the lock is free) gets a deadline of at most now + ARGV[3]: a dead
--     one costs the queue at most that after its turn came.
-- Queue heads past their deadline (not the caller) or without one are dead: each fair script
-- drops them before choosing a head; when that leaves a new head and the lock is free, the head
-- is told. A resent acquire of the holder only renews the lease (the count stays 1).
--
-- The queue, the deadline set and the turn get a TTL covering the last deadline plus 5 minutes
-- (Redisson's default wait, so a Java waiter that joins behind ours is covered until our next
-- call), so a crashed waiter's entries do not stay without one.
local t = redis.call('time')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local owner = ARGV[2]
local place = tonumber(ARGV[3])

local function keep()
  local last = redis.call('zrange', KEYS[3], -1, -1, 'withscores')
  if not last[2] then
    redis.call('del', KEYS[4])
    return
  end
  local ttl = 300000 + math.max(0, math.floor(tonumber(last[2]) - now))
  redis.call('pexpire', KEYS[2], ttl)
  redis.call('pexpire', KEYS[3], ttl)
  redis.call('pexpire', KEYS[4], ttl)
end

local function shift(by)
  for _, waiter in ipairs(redis.call('zrange', KEYS[3], 0, -1)) do
    redis.call('zincrby', KEYS[3], by, waiter)
  end
end

local before = redis.call('lindex', KEYS[2], 0)
local head = before
while head and head ~= owner do
  local deadline = redis.call('zscore', KEYS[3], head)
  if deadline and tonumber(deadline) > now then
    break
  end
  redis.call('lpop', KEYS[2])
  redis.call('zrem', KEYS[3], head)
  head = redis.call('lindex', KEYS[2], 0)
end

local pttl = redis.call('pttl', KEYS[1])
if pttl == -2 then
  if not head or head == owner then
    local mine = redis.call('zscore', KEYS[3], owner)
    if head then
      redis.call('lpop', KEYS[2])
    end
    redis.call('zrem', KEYS[3], owner)
    redis.call('hset', KEYS[1], owner, 1)
    redis.call('pexpire', KEYS[1], ARGV[1])
    if redis.call('exists', KEYS[2]) == 0 then
      redis.call('del', KEYS[3], KEYS[4])
      return 0
    end
    if mine then
      shift(now + tonumber(ARGV[1]) - tonumber(mine))
    end
    redis.call('set', KEYS[4], now + tonumber(ARGV[1]))
    keep()
    return 0
  end
  if head ~= before then
    redis.call(ARGV[6], ARGV[5] .. ':' .. head, '0')
    if tonumber(redis.call('zscore', KEYS[3], head)) > now + place then
      redis.call('zadd', KEYS[3], now + place, head)
    end
  end
elseif redis.call('hexists', KEYS[1], owner) == 1 then
  redis.call('pexpire', KEYS[1], ARGV[1])
  keep()
  return 0
elseif pttl > 0 then
  local turn = tonumber(redis.call('get', KEYS[4]))
  if not head or not turn or now + pttl > turn then
    if head and turn then
      shift(now + pttl - turn)
    end
    redis.call('set', KEYS[4], now + pttl)
  end
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
local floor = now + math.max(pttl, 0) + place
if ahead then
  local deadline = redis.call('zscore', KEYS[3], ahead)
  if deadline then
    wait = math.max(tonumber(deadline) - now, 0)
    floor = tonumber(deadline) + place
  end
end
if queued or ARGV[4] == '1' then
  local current = redis.call('zscore', KEYS[3], owner)
  if not current or tonumber(current) < floor then
    redis.call('zadd', KEYS[3], floor, owner)
  end
  if not queued then
    redis.call('rpush', KEYS[2], owner)
  end
end
keep()
return -2 - wait
