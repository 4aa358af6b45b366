-- Grants one leased permit of a semaphore to one owner (Redisson's RPermitExpirableSemaphore
-- layout), or tells how long to wait.
--
-- Layout, shared by the semaphore-*.lua scripts (all keys in the slot of name N):
--   N              string: available permits, kept equal to limit - held after every write, as
--                  Redisson's RPermitExpirableSemaphore counts it (it decrements N to acquire).
--   {N}:timeout    zset of held permits (N:timeout when N has a hash tag): member = permit id,
--                  score = absolute expiry in ms since the epoch (Redisson's nonExpirableTimeout
--                  922337203685477 for a permit without lease). Ours: id = the owner id
--                  '<client uuid>:<seq>' (Redisson's ids are 16 raw bytes: no clash).
--   redisson_sc:{N}  channel: a release publishes the available count (at least 1).
-- A permit whose score is <= now has expired: every script that writes first removes expired
-- permits (ZREMRANGEBYSCORE), so a crashed holder's permit comes back one lease later. "now"
-- is Redis' TIME (one clock for all our clients; Redisson uses each client's clock); scripts
-- that write after TIME need Redis 5+ (effects replication), as acquire.lua's token seeding.
-- N stays when no permit is held (as in Redisson, whose acquire fails while N is missing):
-- one small string per semaphore name. Only RPermitExpirableSemaphore shares these keys; a
-- plain RSemaphore on the same name would take permits without a zset entry, and our next
-- call would rewrite N over them.
--
-- The limit is not stored: each call passes the limit it uses, a call grants a permit while
-- fewer than its limit are held (counting every holder, Redisson's too), and then writes
-- N = its limit - held, so N follows the last caller (self-healing, not drifting). When two
-- deployments declare different limits L1 < L2 on one name, each is granted against its own
-- limit: no more than L2 permits are ever held, a L1 caller gets one only while fewer than L1
-- are held, and N (what Redisson sees) reflects the limit of the last call, negative while
-- more than that limit are held.
--
-- KEYS[1]  N
-- KEYS[2]  {N}:timeout
-- ARGV[1]  lease in milliseconds
-- ARGV[2]  permit id (the owner id)
-- ARGV[3]  limit: permits the caller allows at once (>= 1)
-- (acquire.lua's ARGV order, with the limit third)
--
-- Returns one integer:
--   >= 0  the permit is held until now + lease; the value is max(0, limit - held) afterwards
--   -1    busy, and no held permit has an expiry: wait for a release message
--   <= -3 busy; the caller's limit frees up when the held permit at index held - limit
--         (0-based, by expiry) expires, in -2 - value milliseconds (>= 1)
--
-- A permit id already held can only be this same acquire sent again (owner ids are never
-- reused): it keeps its one permit and only takes the new lease.
local time = redis.call('time')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local limit = tonumber(ARGV[3])
-- Read first: on a name that is not a semaphore (a lock's hash) this fails with WRONGTYPE
-- before anything is written.
local stored = tonumber(redis.call('get', KEYS[1]))
redis.call('zremrangebyscore', KEYS[2], '-inf', now)
local held = redis.call('zcard', KEYS[2])
local granted = redis.call('zscore', KEYS[2], ARGV[2]) ~= false or held < limit
local reply
if granted then
  redis.call('zadd', KEYS[2], now + tonumber(ARGV[1]), ARGV[2])
  held = redis.call('zcard', KEYS[2])
  reply = math.max(0, limit - held)
else
  reply = -1
  local nth = redis.call('zrange', KEYS[2], held - limit, held - limit, 'withscores')
  if nth[2] and tonumber(nth[2]) < 922337203685477 then
    reply = -2 - (tonumber(nth[2]) - now)
  end
end
if stored == nil then
  redis.call('set', KEYS[1], limit - held)
elseif stored ~= limit - held then
  redis.call('incrby', KEYS[1], limit - held - stored) -- keeps a TTL a Redisson user set
end
return reply
