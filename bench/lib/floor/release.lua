-- The protocol floor's release: the least an idempotent Redisson-layout release does (HDEL,
-- PUBLISH of the unlock message, the unlock latch). Benchmark only.
--
-- KEYS[1]  the lock hash
-- KEYS[2]  the unlock latch of this release request
-- ARGV[1]  the release channel
-- ARGV[2]  owner field
-- ARGV[3]  latch lifetime in milliseconds
--
-- Returns how many clients received the notice; nil when the owner did not hold the lock.
if redis.call('hdel', KEYS[1], ARGV[2]) == 0 then
  return nil
end
local listeners = redis.call('publish', ARGV[1], '0')
redis.call('set', KEYS[2], listeners, 'px', ARGV[3])
return listeners
