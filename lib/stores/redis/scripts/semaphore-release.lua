-- Returns one owner's permit to a semaphore, idempotently (layout: semaphore-acquire.lua).
--
-- KEYS[1]  N
-- KEYS[2]  {N}:timeout
-- KEYS[3]  the unlock latch for this release request
--          (redisson_unlock_latch:{N}:<32 hex request id>, as the plain lock's)
-- KEYS[4]  with 'spublish': the channel (as ARGV[1]), declared as a key so that it lies in N's
--          cluster slot, where SPUBLISH must send it (as release.lua)
-- ARGV[1]  with 'publish': the channel (redisson_sc:{N}), not declared as a key (as release.lua);
--          '' with 'spublish'
-- ARGV[2]  permit id (the owner id)
-- ARGV[3]  latch lifetime in milliseconds
-- ARGV[4]  limit the caller uses
-- ARGV[5]  'spublish' (sharded pub/sub: Redis Cluster with Redis >= 7, as Redisson in cluster
--          mode) or 'publish', as release.lua
--
-- Returns, when the permit was held, how many clients received the message published on the
-- channel (each process wakes one waiter per message); nil when the permit was not held: it
-- expired (its score passed, whether or not another call removed it yet) or was revoked by a
-- force unlock. Expired permits are removed either way and N is rewritten as limit - held.
--
-- The message is the available count (limit - held), at least 1: a caller with a larger limit
-- may be waiting even when this caller's limit is used up, and Redisson wakes min(waiters,
-- message) local waiters (a negative count would make its listener fail).
--
-- The answer is kept in the latch, so the same request sent again returns it instead of nil;
-- the latch is read only when the permit is absent (while it is held, this request cannot
-- have run before).
local time = redis.call('time')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local limit = tonumber(ARGV[4])
-- Read first: on a name that is not a semaphore (a lock's hash) this fails with WRONGTYPE
-- before anything is written.
local stored = tonumber(redis.call('get', KEYS[1]))
redis.call('zremrangebyscore', KEYS[2], '-inf', now)
local released = redis.call('zrem', KEYS[2], ARGV[2]) == 1
local held = redis.call('zcard', KEYS[2])
if stored == nil then
  redis.call('set', KEYS[1], limit - held)
elseif stored ~= limit - held then
  redis.call('incrby', KEYS[1], limit - held - stored)
end
if not released then
  return tonumber(redis.call('get', KEYS[3]))
end
local listeners = redis.call(ARGV[5], KEYS[4] or ARGV[1], math.max(1, limit - held))
redis.call('set', KEYS[3], listeners, 'px', ARGV[3])
return listeners
