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
--   <= -1 refused (a writer holds it, or the hash is not a read-write lock); the holder's PTTL is
--         -2 - value (so -1 means a lock without a lease)
--
-- Each read hold has its own lease key, so a reader that dies loses its hold when that key expires
-- while the other readers keep theirs. The hash itself lives at least as long as the longest read
-- lease (PEXPIRE to the larger of its PTTL and this lease), never shorter.
--
-- Re-entry is counted in the process, so the count stays 1: an owner field that already exists
-- can only be this acquire sent again after a reconnect, which only renews the lease.
-- Upgrading (a reader asking for write) is refused by the caller, not here.
if redis.call('exists', KEYS[1]) == 0 then
  redis.call('hset', KEYS[1], 'mode', 'read', ARGV[2], 1)
  redis.call('set', KEYS[2], 1, 'px', ARGV[1])
  redis.call('pexpire', KEYS[1], ARGV[1])
  return 0
end
local pttl = redis.call('pttl', KEYS[1])
local mode = redis.call('hget', KEYS[1], 'mode')
if mode == 'read' or (mode == 'write' and redis.call('hexists', KEYS[1], ARGV[2] .. ':write') == 1) then
  redis.call('hsetnx', KEYS[1], ARGV[2], 1)
  redis.call('set', KEYS[2], 1, 'px', ARGV[1])
  redis.call('pexpire', KEYS[1], math.max(pttl, tonumber(ARGV[1])))
  return 0
end
return -2 - pttl
