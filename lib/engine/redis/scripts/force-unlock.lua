-- Deletes a lock whoever holds it and wakes its waiters.
--
-- KEYS[1]  the lock hash
-- ARGV[1]  the release channel (redisson_lock__channel:{name})
--
-- Returns 1 when a lock was deleted, 0 when there was none.
if redis.call('del', KEYS[1]) == 1 then
  redis.call('publish', ARGV[1], '0')
  return 1
end
return 0
