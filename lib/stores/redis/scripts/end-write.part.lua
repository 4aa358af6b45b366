-- A downgraded write granted by this library (its owner reads too) has its own lease key
-- '<P>:<owner>:write:rwlock_timeout:1' holding the write's end (ms, Redis TIME): the read leases
-- raise the hash's lease, not the write's. Past that end the write is over: its field and key
-- go, and the lock is in read mode (deleted when no reader is left). A downgrade without that
-- key (Redisson's) is left alone. Keys not in KEYS: those lease keys (N's slot, see KEYS[1]).
local function endWrite(hash, prefix, now)
  if redis.pcall('hget', hash, 'mode') ~= 'write' then
    return
  end
  for _, field in ipairs(redis.call('hkeys', hash)) do
    if field:sub(-6) == ':write' then
      local lease = prefix .. ':' .. field .. ':rwlock_timeout:1'
      local ends = tonumber(redis.call('get', lease))
      if ends and ends <= now then
        redis.call('hdel', hash, field)
        redis.call('del', lease)
        if redis.call('hlen', hash) > 1 then
          redis.call('hset', hash, 'mode', 'read')
        else
          redis.call('del', hash)
        end
      end
    end
  end
end
