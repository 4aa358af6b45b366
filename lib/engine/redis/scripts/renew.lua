-- Watchdog renewal for a batch of locks in one call.
--
-- KEYS[i]    a lock hash
-- ARGV[1]    lease in milliseconds
-- ARGV[i+1]  the owner field for KEYS[i]
--
-- Returns one integer per key: 1 when the owner still holds it (lease restored to ARGV[1]),
-- 0 when the owner's field is gone (expired, deleted, Redis restarted) or the key is no longer
-- a hash (another program wrote a value of another type under the lock's name): the lock is
-- lost. redis.pcall keeps one such key from failing the whole batch.
local renewed = {}
for i = 1, #KEYS do
  if redis.pcall('hexists', KEYS[i], ARGV[i + 1]) == 1 then
    redis.call('pexpire', KEYS[i], ARGV[1])
    renewed[i] = 1
  else
    renewed[i] = 0
  end
end
return renewed
