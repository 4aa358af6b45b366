-- Watchdog renewal for a batch of semaphore permits in one call (layout: semaphore-acquire.lua).
--
-- KEYS[i]    the {N}:timeout zset holding permit i (repeat the key for several permits of one
--            semaphore; up to 100 permits of one slot per call, as renew.lua)
-- ARGV[1]    lease in milliseconds
-- ARGV[i+1]  the permit id for KEYS[i]
--
-- Returns one integer per permit: 1 when it was still held (expiry moved to now + lease), 0
-- when it is gone or already expired (its score passed): the permit is lost. Like a lock
-- whose key expired, a permit past its lease is never revived, so the outcome does not depend
-- on whether another call removed it yet. An expired permit is left for the next acquire,
-- release or available call to remove (they also rewrite N; this script does not touch N, so
-- it needs only the zsets).
local time = redis.call('time')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local expiry = now + tonumber(ARGV[1])
local renewed = {}
for i = 1, #KEYS do
  local score = redis.call('zscore', KEYS[i], ARGV[i + 1])
  if score and tonumber(score) > now then
    redis.call('zadd', KEYS[i], expiry, ARGV[i + 1])
    renewed[i] = 1
  else
    renewed[i] = 0
  end
end
return renewed
