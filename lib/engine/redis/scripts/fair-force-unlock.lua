-- Frees a Redisson-compatible fair lock whoever holds it, clears its queue, and wakes every
-- waiter that was queued.
--
-- KEYS[1]  the lock hash N
-- KEYS[2]  the queue of waiting owners (list redisson_lock_queue:{N})
-- KEYS[3]  the waiters' deadlines (zset redisson_lock_timeout:{N})
-- ARGV[1]  the waiters' channel prefix (redisson_lock__channel:{N})
--
-- Returns 1 when a lock was deleted, 0 when there was none (the queue is cleared either way).
--
-- Clearing the queue also clears what may have stuck it (dead waiters not yet past their
-- deadline). Every waiter in it lost its place, so each is told on its own channel ('0'), the
-- head first: they come back at once and queue again instead of waiting out their retry delay.
local waiters = redis.call('lrange', KEYS[2], 0, -1)
local deleted = redis.call('del', KEYS[1])
redis.call('del', KEYS[2], KEYS[3])
for _, waiter in ipairs(waiters) do
  redis.call('publish', ARGV[1] .. ':' .. waiter, '0')
end
return deleted
