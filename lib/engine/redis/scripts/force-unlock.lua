-- Deletes a lock whoever holds it and wakes its waiters.
--
-- KEYS[1]  the lock hash
-- KEYS[2]  with 'spublish': the release channel (redisson_lock__channel:{name}), in the lock's slot
-- ARGV[1]  'spublish' (sharded pub/sub) or 'publish', as release.lua
-- ARGV[2]  with 'publish': the release channel, not declared as a key (as release.lua)
--
-- Returns 1 when a lock was deleted, 0 when there was none.
if redis.call('del', KEYS[1]) == 1 then
  redis.call(ARGV[1], KEYS[2] or ARGV[2], '0')
  return 1
end
return 0
