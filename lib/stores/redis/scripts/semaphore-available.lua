-- Counts the permits a caller could still take (layout: semaphore-acquire.lua).
--
-- KEYS[1]  N
-- KEYS[2]  {N}:timeout
-- ARGV[1]  limit the caller uses
--
-- Removes expired permits, writes N = limit - held when it differs (so it writes nothing when
-- nothing changed), and returns max(0, limit - held): 0 also when other holders (e.g. a
-- deployment with a larger limit) hold more than this caller's limit.
local time = redis.call('time')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local limit = tonumber(ARGV[1])
-- Read first: on a name that is not a semaphore (a lock's hash) this fails with WRONGTYPE
-- before anything is written.
local stored = tonumber(redis.call('get', KEYS[1]))
redis.call('zremrangebyscore', KEYS[2], '-inf', now)
local held = redis.call('zcard', KEYS[2])
if stored == nil then
  redis.call('set', KEYS[1], limit - held)
elseif stored ~= limit - held then
  redis.call('incrby', KEYS[1], limit - held - stored)
end
return math.max(0, limit - held)
