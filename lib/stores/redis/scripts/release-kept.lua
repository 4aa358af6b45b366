-- Releases a plain lock (release.lua's) but keeps it held until the end of its holdAtLeast
-- period, idempotently: the owner's field is renamed '<owner>:kept' (same count), the hash's
-- lease is set to what is left of the period, and nothing is published, so no waiter is woken
-- early and Redisson's RLock on the name sees a held lock (its tryLock answers the PTTL) until
-- the hash expires. The rename leaves no field a renewal (renew-all.lua, renew-node.lua) can
-- find: one the watchdog sent before the release but that runs after it (its EVALSHA resent
-- after NOSCRIPT, or after a reconnect) finds the hold gone instead of stretching the lock to a
-- whole lease.
--
-- KEYS[1]  the lock hash
-- KEYS[2]  the unlock latch for this release request (as release.lua's)
-- ARGV[1]  owner field
-- ARGV[2]  latch lifetime in milliseconds (at least the period left: a resend while the field
--          lives finds the latch)
-- ARGV[3]  milliseconds to keep the lock from now (PEXPIRE of the hash)
--
-- Returns 1 when the lock is kept until then, also to the same request sent again (the latch
-- answers, and the lease is not moved); nil when the owner field is absent: the lock expired or
-- was deleted, and nothing is touched (a lock is never released by someone who does not own it).
if redis.call('exists', KEYS[2]) == 1 then
  return 1
end
local count = redis.call('hget', KEYS[1], ARGV[1])
if not count then
  return nil
end
redis.call('hset', KEYS[1], ARGV[1] .. ':kept', count)
redis.call('hdel', KEYS[1], ARGV[1])
redis.call('pexpire', KEYS[1], ARGV[3])
redis.call('set', KEYS[2], 1, 'px', ARGV[2])
return 1
