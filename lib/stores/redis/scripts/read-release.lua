--!df flags=allow-undeclared-keys
-- Ends one owner's read hold on a Redisson-compatible read-write lock, idempotently.
--
-- KEYS[1]  the lock hash N (see read-acquire.lua)
-- KEYS[2]  this hold's lease key '<P>:<owner>:rwlock_timeout:1' (P: see ARGV[4])
-- KEYS[3]  the unlock latch for this release request
--          (redisson_unlock_latch:{N}:<32 hex request id>, as Redisson 3.24+)
-- KEYS[4]  with 'spublish': the lock's channel (as ARGV[1]), declared as a key so that it lies in
--          N's cluster slot, where SPUBLISH must send it (as release.lua)
-- ARGV[1]  with 'publish': the lock's channel (redisson_rwlock:{N}, or redisson_rwlock:N when N
--          contains '{'), not declared as a key (as release.lua); '' with 'spublish'
-- ARGV[2]  owner id '<client uuid>:<seq>'
-- ARGV[3]  latch lifetime in milliseconds
-- ARGV[4]  P, the other readers' lease key prefix: '{N}', or N itself when N contains '{'
-- ARGV[5]  'spublish' (sharded pub/sub: Redis Cluster with Redis >= 7, as Redisson in cluster
--          mode) or 'publish', as release.lua
--
-- Keys not in KEYS: the other readers' lease keys '<P>:<field>:rwlock_timeout:<i>' (i = 1 .. that
-- field's count: Redisson readers count re-entries in Redis and keep one key per level). Their
-- names are only known from the hash's fields; they share N's cluster slot by construction.
--
-- Returns:
--   >= 0  the lock is now free: how many clients received the '0' published on its channel
--   -1    this hold ended but the lock is still held (other live readers, or this owner's write
--         hold after a downgrade): nothing is published
--   nil   the owner's read field is absent (expired, deleted, never held): nothing is touched
--
-- When readers remain, the hash's lease becomes the longest remaining read lease (the largest PTTL
-- of their lease keys), so it dies with the last live reader. Readers whose lease keys are gone
-- are dead: when no live reader remains the lock is freed, dead fields and all. In write mode
-- (this owner also writes) the hash keeps its lease, which is never below a read lease.
--
-- The answer is kept in the latch, so the same request sent again (ioredis resends unanswered
-- commands after a reconnect) returns it instead of nil.
--
-- A downgraded write past its end is ended first (endWrite, end-write.part.lua). When this read
-- leaves this owner's live downgraded write, the hash's lease is the write's own again (its
-- lease key's end) and that key goes: the read lease no longer stretches the write.
local time = redis.call('time')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)

-- @include end-write.part.lua

endWrite(KEYS[1], ARGV[4], now)
if redis.call('hdel', KEYS[1], ARGV[2]) == 0 then
  return tonumber(redis.call('get', KEYS[3]))
end
redis.call('del', KEYS[2])
local answer
if redis.call('hlen', KEYS[1]) > 1 then
  if redis.call('hget', KEYS[1], 'mode') == 'write' then
    local writeLease = ARGV[4] .. ':' .. ARGV[2] .. ':write:rwlock_timeout:1'
    local ends = tonumber(redis.call('get', writeLease))
    if ends then
      redis.call('pexpire', KEYS[1], ends - now)
      redis.call('del', writeLease)
    end
    answer = -1
  else
    local longest = 0
    local fields = redis.call('hgetall', KEYS[1])
    for f = 1, #fields, 2 do
      local count = tonumber(fields[f + 1])
      if count then
        for i = 1, count do
          local key = ARGV[4] .. ':' .. fields[f] .. ':rwlock_timeout:' .. i
          longest = math.max(longest, redis.call('pttl', key))
        end
      end
    end
    if longest > 0 then
      redis.call('pexpire', KEYS[1], longest)
      answer = -1
    end
  end
end
if not answer then
  redis.call('del', KEYS[1])
  answer = redis.call(ARGV[5], KEYS[4] or ARGV[1], '0')
end
redis.call('set', KEYS[3], answer, 'px', ARGV[3])
return answer
