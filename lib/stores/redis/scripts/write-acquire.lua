-- Takes the write hold on a Redisson-compatible read-write lock (RReadWriteLock layout).
--
-- KEYS[1]  the lock hash N (see read-acquire.lua); the write holder's field is '<owner>:write'
-- ARGV[1]  lease in milliseconds
-- ARGV[2]  owner id '<client uuid>:<seq>' (the script appends ':write')
--
-- Returns one integer:
--   0     granted: the lock was free (no readers, no writer)
--   <= -1 refused: readers or another writer hold it (or the hash is not a read-write lock); the
--         holder's PTTL is -2 - value (-1: a lock without a lease)
--
-- Any read hold refuses the write, including one of this same owner: upgrading is not allowed (the
-- caller refuses it before calling). Re-entry is counted in the process, so an existing write
-- field of this owner can only be this acquire sent again after a reconnect (before any read of
-- this owner): it only renews the lease, and the count stays 1.
if redis.call('exists', KEYS[1]) == 0 then
  redis.call('hset', KEYS[1], 'mode', 'write', ARGV[2] .. ':write', 1)
  redis.call('pexpire', KEYS[1], ARGV[1])
  return 0
end
if redis.call('hget', KEYS[1], 'mode') == 'write' and redis.call('hexists', KEYS[1], ARGV[2] .. ':write') == 1 then
  redis.call('pexpire', KEYS[1], ARGV[1])
  return 0
end
return -2 - redis.call('pttl', KEYS[1])
