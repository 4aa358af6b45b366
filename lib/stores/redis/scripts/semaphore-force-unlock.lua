-- Revokes every permit of a semaphore, whoever holds it, and wakes its waiters
-- (layout: semaphore-acquire.lua).
--
-- KEYS[1]  N
-- KEYS[2]  {N}:timeout
-- KEYS[3]  with 'spublish': the channel (as ARGV[1]), declared as a key, in N's cluster slot
-- ARGV[1]  with 'publish': the channel (redisson_sc:{N}), not declared as a key (as release.lua);
--          '' with 'spublish'
-- ARGV[2]  limit the caller uses
-- ARGV[3]  'spublish' (sharded pub/sub: Redis Cluster with Redis >= 7) or 'publish', as
--          release.lua
--
-- Deletes the permit zset (Redisson's permits too), sets N to the limit, and when live permits
-- were revoked publishes the limit (at least 1) so that waiters everywhere retry. Returns how
-- many unexpired permits were revoked (0: none was held). Their holders learn it from their
-- next renewal (0) or release (nil), as a lock holder does after a force unlock.
local time = redis.call('time')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local limit = tonumber(ARGV[2])
-- Read first: on a name that is not a semaphore (a lock's hash) this fails with WRONGTYPE
-- before anything is written.
local stored = tonumber(redis.call('get', KEYS[1]))
redis.call('zremrangebyscore', KEYS[2], '-inf', now)
local revoked = redis.call('zcard', KEYS[2])
redis.call('del', KEYS[2])
if stored == nil then
  redis.call('set', KEYS[1], limit)
elseif stored ~= limit then
  redis.call('incrby', KEYS[1], limit - stored)
end
if revoked > 0 then
  redis.call(ARGV[3], KEYS[3] or ARGV[1], math.max(1, limit))
end
return revoked
