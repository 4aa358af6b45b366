--!df flags=allow-undeclared-keys
-- Takes a read hold on a Redisson-compatible read-write lock (RReadWriteLock layout).
--
-- KEYS[1]  the lock hash N: field 'mode' = 'read' | 'write', field '<owner>' = that owner's read
--          hold count, field '<owner>:write' = the write holder's count
-- KEYS[2]  this hold's lease key '<P>:<owner>:rwlock_timeout:1', where P is '{N}', or N itself when
--          N contains '{' (Redisson's suffixName rule: same cluster slot as N)
-- ARGV[1]  lease in milliseconds
-- ARGV[2]  owner id '<client uuid>:<seq>'
--
-- Returns one integer:
--   0     granted: the lock was free, or is in read mode (readers share it), or is in write mode
--         held by this same owner (a downgrade: the write holder also reads)
--   <= -1 refused (a writer holds it, or the hash is not a read-write lock); the wait until the
--         holder's lease ends is -2 - value (so -1 means a lock without a lease): the hash's PTTL,
--         or the end of a downgraded write when that comes first
--
-- A downgrade keeps the write's lease apart: the write's lease key (see end-write.part.lua) is set to the
-- hash's PTTL at that moment (the write's remaining lease), before the read lease raises the
-- hash's. Every script on N first ends a downgraded write past its end (endWrite).
--
-- Each read hold has its own lease key, so a reader that dies loses its hold when that key expires
-- while the other readers keep theirs. The hash itself lives at least as long as the longest read
-- lease (PEXPIRE to the larger of its PTTL and this lease), never shorter.
--
-- Re-entry is counted in the process, so the count stays 1: an owner field that already exists
-- can only be this acquire sent again after a reconnect, which only renews the lease.
-- Upgrading (a reader asking for write) is refused by the caller, not here.
local time = redis.call('time')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
-- P, the lease keys' prefix: '{N}', or N itself when N contains '{' (Redisson's suffixName).
local prefix = KEYS[1]:find('{', 1, true) and KEYS[1] or ('{' .. KEYS[1] .. '}')

-- @include end-write.part.lua

endWrite(KEYS[1], prefix, now)
if redis.call('exists', KEYS[1]) == 0 then
  redis.call('hset', KEYS[1], 'mode', 'read', ARGV[2], 1)
  redis.call('set', KEYS[2], 1, 'px', ARGV[1])
  redis.call('pexpire', KEYS[1], ARGV[1])
  return 0
end
local pttl = redis.call('pttl', KEYS[1])
local mode = redis.call('hget', KEYS[1], 'mode')
local writeLease = prefix .. ':' .. ARGV[2] .. ':write:rwlock_timeout:1'
if mode == 'read' or (mode == 'write' and redis.call('hexists', KEYS[1], ARGV[2] .. ':write') == 1) then
  if mode == 'write' and pttl > 0 and redis.call('exists', writeLease) == 0 then
    redis.call('set', writeLease, now + pttl, 'px', math.max(pttl, tonumber(ARGV[1])))
  end
  redis.call('hsetnx', KEYS[1], ARGV[2], 1)
  redis.call('set', KEYS[2], 1, 'px', ARGV[1])
  redis.call('pexpire', KEYS[1], math.max(pttl, tonumber(ARGV[1])))
  return 0
end
local wait = pttl
if mode == 'write' then
  for _, field in ipairs(redis.call('hkeys', KEYS[1])) do
    local ends = field:sub(-6) == ':write' and tonumber(redis.call('get', prefix .. ':' .. field .. ':rwlock_timeout:1'))
    if ends then
      wait = pttl < 0 and ends - now or math.min(pttl, ends - now)
    end
  end
end
return -2 - wait
