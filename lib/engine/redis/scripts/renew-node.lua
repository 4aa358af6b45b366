-- Watchdog renewal of plain-lock holds of many cluster slots on one Redis Cluster master, in
-- one call (up to 100 holds per call).
--
-- KEYS       none: this script is the one exception to "every key is declared in KEYS". Keys
--            of different slots declared in KEYS are refused with CROSSSLOT (even with the
--            allow-cross-slot-keys flag), and renewing per slot would cost one call per lock.
--            It is sent to the master that serves every named key's slot (the client groups
--            holds by master), and it only renews: it never creates a key.
-- ARGV[1]    lease in milliseconds
-- ARGV[2i]   the lock hash of hold i
-- ARGV[2i+1] the owner field of hold i
--
-- Returns one integer per hold, in order: 1 when the owner still holds it (lease restored, as
-- renew.lua), 0 when its field is gone (the lock is lost), 2 when this node cannot serve the
-- key (its slot moved to another master, or is being migrated away): the client then renews
-- that hold through the slot's current master with renew.lua. redis.pcall keeps such a key
-- (Redis answers "non local key") from failing the whole batch.
local renewed = {}
for i = 1, (#ARGV - 1) / 2 do
  local hash, owner = ARGV[2 * i], ARGV[2 * i + 1]
  local held = redis.pcall('hexists', hash, owner)
  if type(held) == 'table' then
    renewed[i] = 2
  elseif held == 1 then
    redis.call('pexpire', hash, ARGV[1])
    renewed[i] = 1
  else
    renewed[i] = 0
  end
end
return renewed
