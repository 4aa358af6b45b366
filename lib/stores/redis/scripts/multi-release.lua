-- Releases every member of a multi-lock held by one owner, idempotently, in one call.
--
-- KEYS[1..n]  the member lock hashes, as given to multi-acquire.lua (n >= 1, no duplicates)
-- KEYS[n+1]   the unlock latch of this release request, named after any member so that it
--             shares the members' slot: redisson_unlock_latch:{<member>}:<32 hex request id>
-- ARGV[1]     owner field
-- ARGV[2]     latch lifetime in milliseconds
-- ARGV[2+i]   the release channel of KEYS[i] (redisson_lock__channel:{<member>})
-- ARGV[3+n]   optional: 'spublish' (sharded pub/sub, as release.lua on a Redis Cluster >= 7: the
--             channels share the members' slot) or 'publish' (the default)
--
-- Returns an array of n entries, one per member in KEYS order:
--   integer  the member was freed: its owner field removed (the hash with it, as after
--            Redisson's DEL) and '0' published on its channel; the value is how many clients
--            received that message (as release.lua returns).
--   nil      the owner field was absent: the member expired or was deleted (lost); it is not
--            touched, whoever holds it now. The other members are still released.
--
-- One latch per call, not per member: the members of one call are always released together,
-- so if this call frees at least one member it cannot have run before (a run removes every
-- field of the owner, and owner ids are never reused), and the answer is stored once. If it
-- frees none it is either a resend (the latch holds the first answer: returned as it was) or a
-- release of a group that was entirely lost (no latch: every entry nil, and nothing stored).
-- The latch holds the entries space-separated, '-' for nil.
local n = #KEYS - 1
if n < 1 then
  return redis.error_reply('ERR multi-release needs at least one member key and the latch')
end
local publish = ARGV[3 + n] or 'publish'
local replies = {}
local encoded = {}
local freed = false
for i = 1, n do
  if redis.call('hdel', KEYS[i], ARGV[1]) == 1 then
    replies[i] = redis.call(publish, ARGV[2 + i], '0')
    encoded[i] = tostring(replies[i])
    freed = true
  else
    replies[i] = false -- Lua false becomes a nil entry; a Lua nil would end the array
    encoded[i] = '-'
  end
end
if freed then
  redis.call('set', KEYS[n + 1], table.concat(encoded, ' '), 'px', ARGV[2])
  return replies
end
local stored = redis.call('get', KEYS[n + 1])
if stored then
  local i = 0
  for entry in string.gmatch(stored, '%S+') do
    i = i + 1
    replies[i] = entry ~= '-' and tonumber(entry)
  end
end
return replies
