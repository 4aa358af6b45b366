-- Deletes a lock whoever holds it and wakes its waiters.
--
-- KEYS[1]  the lock hash
-- KEYS[2]  the release channel (redisson_lock__channel:{name}), in the lock's slot
-- ARGV[1]  'spublish' (sharded pub/sub) or 'publish', as release.lua
--
-- Returns 1 when a lock was deleted, 0 when there was none.
if redis.call('del', KEYS[1]) == 1 then
  redis.call(ARGV[1], KEYS[2], '0')
  return 1
end
return 0
