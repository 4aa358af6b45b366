-- Releases a Redisson-compatible reentrant lock held by one owner, idempotently.
--
-- KEYS[1]  the lock hash
-- KEYS[2]  the unlock latch for this release request
--          (redisson_unlock_latch:{name}:<32 hex request id>, as Redisson 3.24+)
-- KEYS[3]  with 'spublish': the release channel (redisson_lock__channel:{name}), declared as a
--          key so that it lies in the lock's cluster slot, where SPUBLISH must send it
-- ARGV[1]  owner field
-- ARGV[2]  latch lifetime in milliseconds
-- ARGV[3]  'spublish' (sharded pub/sub: Redis Cluster with Redis >= 7, as Redisson in cluster
--          mode) or 'publish'
-- ARGV[4]  with 'publish': the release channel, not declared as a key (ACL key patterns then
--          need not cover it, only channel patterns); '' with 'spublish' (as the other release
--          scripts take their channel: scripts/script-definition.ts, channelKey)
--
-- Returns, when the lock was freed, how many clients received the '0' published on its channel
-- (the processes waiting for it: they wake and try); nil when the owner field is absent: the
-- lock expired or was deleted, and nothing is touched (a lock is never released by someone who
-- does not own it).
--
-- This library counts re-entry in the process and keeps the hold count in Redis at 1 (a resent
-- acquire does too), so one HDEL ends the hold, and Redis drops the hash with its only field:
-- the lock is free, as after Redisson's DEL.
--
-- The answer is kept in the latch, so the same request sent again (ioredis resends unanswered
-- commands after a reconnect) returns it instead of nil. The latch is read only when the owner
-- field is missing: while the field exists, this request cannot have run before.
if redis.call('hdel', KEYS[1], ARGV[1]) == 0 then
  return tonumber(redis.call('get', KEYS[2]))
end
local listeners = redis.call(ARGV[3], KEYS[3] or ARGV[4], '0')
redis.call('set', KEYS[2], listeners, 'px', ARGV[2])
return listeners
