--!df flags=allow-undeclared-keys
-- Watchdog renewal of lock holds of many cluster slots on one Redis Cluster master, in one call
-- (up to 100 holds per call), for every kind renew-all.lua knows and semaphore permits.
--
-- KEYS       none: this script is the one exception to "every key is declared in KEYS". Keys
--            of different slots declared in KEYS are refused with CROSSSLOT (even with the
--            allow-cross-slot-keys flag), and renewing per slot would cost one call per lock.
--            It is sent to the master that serves every named key's slot (the client groups
--            holds by master), and it only renews: it never creates a key but a live reader's
--            lease key (as renew-all.lua), in the slot of its hash.
-- ARGV[1]    lease in milliseconds
-- ARGV[2]    the holds' kinds, one character per hold, as renew-all.lua: 'l' exclusive (plain or
--            fair lock, multi-lock member), 'w' read-write lock's write hold, 'r' its read hold,
--            'p' a semaphore permit (as semaphore-renew.lua)
-- then, per hold in order: the lock hash, the owner id, and for 'r' the hold's lease key; for
-- 'p' the {N}:timeout zset and the permit id
--
-- Returns one integer per hold, in order: 1 when the owner still holds it (lease restored, as
-- renew-all.lua), 0 when its field is gone (the hold is lost), 2 when this node cannot serve the
-- key (its slot moved to another master, or is being migrated away): the client then renews
-- that hold through the slot's current master with renew-all.lua. redis.pcall keeps such a key
-- (Redis answers "non local key") from failing the whole batch.
-- A downgraded write's own lease (see end-write.part.lua): 'r' and 'w' first end such a write past its
-- end (a 'w' then finds its field gone: lost); 'w' moves its lease key's end to now + lease,
-- and 'r' keeps that key alive as long as the hash, without moving the write's end.
-- @include end-write.part.lua
-- P, the lease keys' prefix of hash N: '{N}', or N itself when N contains '{' (suffixName).
local function prefixOf(hash)
  return hash:find('{', 1, true) and hash or ('{' .. hash .. '}')
end
local lease = tonumber(ARGV[1])
local kinds = ARGV[2]
local renewed = {}
local now
if kinds:find('[prw]') then
  local time = redis.call('time')
  now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
end
local a = 3
for j = 1, #kinds do
  local kind = kinds:sub(j, j)
  local hash, owner = ARGV[a], ARGV[a + 1]
  local field = owner
  if kind == 'w' then
    field = owner .. ':write'
  end
  local held
  local writeLease
  if kind == 'r' or kind == 'w' then
    endWrite(hash, prefixOf(hash), now)
    writeLease = prefixOf(hash) .. ':' .. owner .. ':write:rwlock_timeout:1'
  end
  if kind == 'p' then
    -- A permit past its lease is never revived (semaphore-renew.lua).
    held = redis.pcall('zscore', hash, owner)
    if type(held) ~= 'table' then
      held = (held and tonumber(held) > now) and 1 or 0
    end
  else
    held = redis.pcall('hexists', hash, field)
  end
  if type(held) == 'table' then
    renewed[j] = 2
  elseif held == 1 and kind == 'p' then
    redis.call('zadd', hash, now + lease, owner)
    renewed[j] = 1
  elseif held == 1 then
    if kind == 'l' then
      redis.call('pexpire', hash, lease)
    else
      redis.call('pexpire', hash, math.max(lease, redis.call('pttl', hash)))
    end
    if kind == 'r' then
      redis.call('set', ARGV[a + 2], 1, 'px', lease)
      if redis.call('exists', writeLease) == 1 then
        redis.call('pexpire', writeLease, redis.call('pttl', hash))
      end
    elseif kind == 'w' and redis.call('exists', writeLease) == 1 then
      redis.call('set', writeLease, now + lease, 'px', redis.call('pttl', hash))
    end
    renewed[j] = 1
  else
    renewed[j] = 0
  end
  if kind == 'r' then
    a = a + 3
  else
    a = a + 2
  end
end
return renewed
