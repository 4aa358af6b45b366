-- Releases one hold of a Redisson-compatible reentrant lock, idempotently.
--
-- KEYS[1]  the lock hash
-- KEYS[2]  the unlock latch for this release request
--          (redisson_unlock_latch:{name}:<32 hex request id>, as Redisson 3.24+)
-- ARGV[1]  the release channel (redisson_lock__channel:{name})
-- ARGV[2]  lease in milliseconds, restored when holds remain
-- ARGV[3]  owner field
-- ARGV[4]  latch lifetime in milliseconds
--
-- Returns 1 when the lock was freed (and '0' was published so waiters wake), 0 when the owner
-- still holds it (count decremented), nil when the owner field is absent: the lock expired or
-- was deleted, and nothing is touched (a lock is never released by someone who does not own it).
--
-- The answer is kept in the latch, so the same request sent again (ioredis resends unanswered
-- commands after a reconnect) returns it instead of nil. The latch is read only when the owner
-- field is missing: while the field exists, this request cannot have run before, because this
-- library's fields hold a count of 1 (re-entry is counted locally) and one request ends them.
local count = redis.call('hget', KEYS[1], ARGV[3])
if not count then
  local latched = redis.call('get', KEYS[2])
  if latched then
    return tonumber(latched)
  end
  return nil
end
local result
if tonumber(count) > 1 then
  redis.call('hincrby', KEYS[1], ARGV[3], -1)
  redis.call('pexpire', KEYS[1], ARGV[2])
  result = 0
else
  redis.call('del', KEYS[1])
  redis.call('publish', ARGV[1], '0')
  result = 1
end
redis.call('set', KEYS[2], result, 'px', ARGV[4])
return result
