--!df flags=allow-undeclared-keys
-- Frees whatever lock lives under a name, whoever holds it, and wakes its waiters: a plain lock
-- (RLock), a fair lock (RFairLock) with its queue, or a read-write lock (RReadWriteLock) with
-- every reader and the writer.
--
-- KEYS[1]  the lock hash N
-- KEYS[2]  the fair lock's queue (list redisson_lock_queue:{N})
-- KEYS[3]  the fair lock's waiter deadlines (zset redisson_lock_timeout:{N})
-- KEYS[4]  with 'spublish': the plain lock's channel (redisson_lock__channel:{N}), in N's slot
-- KEYS[5]  with 'spublish': the read-write lock's channel (redisson_rwlock:{N}), in N's slot
-- ARGV[1]  'spublish' (sharded pub/sub) or 'publish', as release.lua; used for every message
-- ARGV[2]  with 'publish': the plain lock's channel, not declared as a key (as release.lua)
-- ARGV[3]  with 'publish': the read-write lock's channel, not declared as a key
-- ARGV[4]  P, the readers' lease key prefix: '{N}', or N itself when N contains '{'
-- ARGV[5]  the fair waiters' channel prefix (redisson_lock__channel:{N}); a waiter's channel is
--          '<prefix>:<owner>'
--
-- Keys not in KEYS: the readers' lease keys '<P>:<field>:rwlock_timeout:<i>' (i = 1 .. the
-- field's count), named by the hash's fields, and the fair waiters' channels, named by the queue;
-- they share N's cluster slot by construction (see fair-release.lua for SPUBLISH to them).
--
-- Returns 1 when a lock was deleted, 0 when there was none. A read-write lock (its hash has a
-- 'mode' field) loses its lease keys too and '1' is published on its channel (wake every
-- waiter); any other hash gets '0' on the plain channel. A fair queue is cleared either way
-- (also what may have stuck it: dead waiters not yet past their deadline), and each waiter that
-- was in it is told on its own channel, the head first, so they queue again at once.
local plain = KEYS[4] or ARGV[2]
local deleted = 0
local mode = redis.call('hget', KEYS[1], 'mode')
if mode then
  local fields = redis.call('hgetall', KEYS[1])
  for f = 1, #fields, 2 do
    local count = tonumber(fields[f + 1])
    if count and fields[f]:sub(-6) ~= ':write' then
      for i = 1, count do
        redis.call('del', ARGV[4] .. ':' .. fields[f] .. ':rwlock_timeout:' .. i)
      end
    end
  end
  redis.call('del', KEYS[1])
  redis.call(ARGV[1], KEYS[5] or ARGV[3], '1')
  deleted = 1
elseif redis.call('del', KEYS[1]) == 1 then
  redis.call(ARGV[1], plain, '0')
  deleted = 1
end
local waiters = redis.call('lrange', KEYS[2], 0, -1)
redis.call('del', KEYS[2], KEYS[3])
for _, waiter in ipairs(waiters) do
  redis.call(ARGV[1], ARGV[5] .. ':' .. waiter, '0')
end
return deleted
