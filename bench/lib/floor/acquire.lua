-- The protocol floor's acquire: the least a Redisson-layout (RLock hash) acquire does, with no
-- re-entry, no resent-attempt check and no fencing token. Benchmark only.
--
-- KEYS[1]  the lock hash
-- ARGV[1]  lease in milliseconds
-- ARGV[2]  owner field
--
-- Returns 0 when taken, else the holder's PTTL (never 0: a held lock has a lease or -1).
local pttl = redis.call('pttl', KEYS[1])
if pttl ~= -2 then
  return pttl
end
redis.call('hset', KEYS[1], ARGV[2], 1)
redis.call('pexpire', KEYS[1], ARGV[1])
return 0
