-- Frees a read-write lock whoever holds it: every reader and the writer, and wakes its waiters.
--
-- KEYS[1]  the lock hash N (see read-acquire.lua)
-- ARGV[1]  the lock's channel (redisson_rwlock:{N})
-- ARGV[2]  P, the readers' lease key prefix: '{N}', or N itself when N contains '{'
--
-- Keys not in KEYS: the readers' lease keys '<P>:<field>:rwlock_timeout:<i>' (i = 1 .. the
-- field's count), named by the hash's fields; they share N's cluster slot by construction.
--
-- Returns 1 when a lock was deleted (its lease keys too, and '1' published: wake every waiter),
-- 0 when there was none.
local fields = redis.call('hgetall', KEYS[1])
if #fields == 0 then
  return 0
end
for f = 1, #fields, 2 do
  local count = tonumber(fields[f + 1])
  if count and fields[f]:sub(-6) ~= ':write' then
    for i = 1, count do
      redis.call('del', ARGV[2] .. ':' .. fields[f] .. ':rwlock_timeout:' .. i)
    end
  end
end
redis.call('del', KEYS[1])
redis.call('publish', ARGV[1], '1')
return 1
