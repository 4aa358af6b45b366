-- Takes several Redisson-compatible reentrant locks (RLock layout) for one owner: all or none.
--
-- KEYS[1..n]  the member lock hashes (field = owner id, value = hold count), 1 <= n <= 1000,
--             without duplicates (the engine dedups; a duplicate here is harmless, but
--             multi-release would report its second entry as lost). On a cluster all keys of
--             one call share a slot: the engine sends one call per slot.
-- ARGV[1]     lease in milliseconds (PEXPIRE of every member)
-- ARGV[2]     owner field '<client uuid>:<owner id>', one for every member of the group
--
-- Returns one integer:
--   0     the owner now holds every member: each hash has the field ARGV[2] = 1 and the lease,
--         exactly what acquire.lua leaves, so Redisson and the plain lock see ordinary RLocks.
--   < 0   nothing was written; member i (the first busy one in KEYS order) is held by another
--         owner and p is its PTTL (-1: held without a lease). The value is
--             -1 - ((p + 1) * 1000 + (i - 1))
--         and decodes as x = -1 - value, i = x % 1000 + 1, p = floor(x / 1000) - 1.
--         So -i means "member i, no lease"; -30001003 means member 3 with 30 000 ms left.
--         p is capped at 9e12 ms (285 years) so the value stays an exact double.
--
-- A member whose field for this owner already exists can only be this same call sent again
-- (owner ids are never reused): it counts as free and keeps the count at 1.
if #KEYS > 1000 then
  return redis.error_reply('ERR multi-acquire takes at most 1000 keys per call')
end
for i = 1, #KEYS do
  local pttl = redis.call('pttl', KEYS[i])
  if pttl ~= -2 and redis.call('hexists', KEYS[i], ARGV[2]) == 0 then
    return -1 - ((math.min(pttl, 9e12) + 1) * 1000 + (i - 1))
  end
end
for i = 1, #KEYS do
  redis.call('hset', KEYS[i], ARGV[2], 1)
  redis.call('pexpire', KEYS[i], ARGV[1])
end
return 0
