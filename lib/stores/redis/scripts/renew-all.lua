--!df flags=allow-undeclared-keys
-- Watchdog renewal of a batch of holds of mixed kinds in one call (up to 100 per call, all keys
-- in one cluster slot, as Redisson's batched renewal).
--
-- ARGV[1]    lease in milliseconds
-- ARGV[2]    the holds' kinds, one character per hold, in order:
--              'l'  an exclusive hold: plain lock (RLock) or fair lock (RFairLock): same layout
--              'w'  a read-write lock's write hold
--              'r'  a read-write lock's read hold
-- ARGV[2+j]  owner of hold j: the hash field for 'l' (owner id), the owner id for 'w' and 'r'
--            (the write field is '<owner>:write', the read field '<owner>')
-- KEYS       the holds' keys in the same order: one for 'l' and 'w' (the lock hash); two for
--            'r' (the lock hash, then that hold's lease key '<P>:<owner>:rwlock_timeout:1')
--
-- Returns one integer per hold, in order: 1 when the owner still holds it (lease restored),
-- 0 when its field is gone (expired, deleted, Redis restarted): the hold is lost. A batch whose
-- KEYS or ARGV do not match ARGV[2] is refused with an error before anything is renewed.
--
-- 'l': PEXPIRE the hash to the lease (exactly what renew.lua does for plain locks).
-- 'w': PEXPIRE the hash to the larger of the lease and its PTTL (a downgraded owner's read
--      lease may be the longer one).
-- 'r': the lease key is set again to the lease (recreated if it had expired while the field
--      still existed: the hash, which excludes writers, was there all along) and the hash's PTTL
--      is raised to at least the lease, never lowered: it covers the longest read lease.
-- A downgraded write's own lease (see end-write.part.lua): 'r' and 'w' first end such a write past its
-- end (a 'w' then finds its field gone: lost); 'w' moves its lease key's end to now + lease,
-- and 'r' keeps that key alive as long as the hash, without moving the write's end.
-- @include end-write.part.lua
-- P, the lease keys' prefix of hash N: '{N}', or N itself when N contains '{' (suffixName).
local function prefixOf(hash)
  return hash:find('{', 1, true) and hash or ('{' .. hash .. '}')
end
local kinds = ARGV[2]
local lease = tonumber(ARGV[1])
local keyCount = 0
for j = 1, #kinds do
  local kind = kinds:sub(j, j)
  if kind == 'r' then
    keyCount = keyCount + 2
  elseif kind == 'l' or kind == 'w' then
    keyCount = keyCount + 1
  else
    return redis.error_reply('renew-all: unknown hold kind "' .. kind .. '"')
  end
end
if keyCount ~= #KEYS or #kinds + 2 ~= #ARGV then
  return redis.error_reply('renew-all: KEYS and ARGV do not match the kinds in ARGV[2]')
end

local renewed = {}
local now
if kinds:find('[rw]') then
  local time = redis.call('time')
  now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
end
local k = 1
for j = 1, #kinds do
  local kind = kinds:sub(j, j)
  local hash, owner = KEYS[k], ARGV[j + 2]
  local field = owner
  if kind == 'w' then
    field = owner .. ':write'
  end
  local writeLease
  if kind ~= 'l' then
    endWrite(hash, prefixOf(hash), now)
    writeLease = prefixOf(hash) .. ':' .. owner .. ':write:rwlock_timeout:1'
  end
  -- pcall: a key that is no longer a hash (another program wrote it) is lost, not the batch.
  if redis.pcall('hexists', hash, field) == 1 then
    if kind == 'l' then
      redis.call('pexpire', hash, lease)
    else
      redis.call('pexpire', hash, math.max(lease, redis.call('pttl', hash)))
    end
    if kind == 'r' then
      redis.call('set', KEYS[k + 1], 1, 'px', lease)
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
    k = k + 2
  else
    k = k + 1
  end
end
return renewed
