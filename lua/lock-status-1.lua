#!lua flags=no-writes
-- lock-status: a consistent snapshot of one lock, for `rbarrier status`.
--
-- A script so holders, waiters and the counter are read at one instant.
--
-- KEYS[1]  the lock's base key, rb:l:{NAME} (derived keys: includes/lock.lua)
-- ARGV     none
--
-- Returns {max, now_ms, token, nholders,
--          id, token, deadline, since, mode, ...   (nholders times)
--          id, deadline, mode, ...}                 (the waiters, first
--                                                    first)
--   max       the lock's slots (0: nobody holds or waits)
--   now_ms    Redis TIME in milliseconds, to turn deadlines into leases
--   token     the last token granted (0: never)
--   mode      's' shared, 'x' exclusive
-- Expired entries are listed as they are (a negative lease left): status
-- never changes the lock.

--- @include "includes/time.lua"
--- @include "includes/keys.lua"
--- @include "includes/lock.lua"

local base = KEYS[1]
local now = now_ms()
local holders = redis.call('ZRANGE', lock_key(base, 'holders'), 0, -1,
                           'WITHSCORES')
local waiters = redis.call('ZRANGE', lock_key(base, 'queue'), 0, -1)
local max = 0
if #holders > 0 or #waiters > 0 then
  max = tonumber(redis.call('HGET', base, 'max') or '0') or 0
end
local res = {max, now, tonumber(redis.call('GET', lock_key(base, 'token'))
                                or '0') or 0, #holders / 2}
for i = 1, #holders, 2 do
  local _, _, token, since, shared = lock_entry(base, holders[i])
  res[#res + 1] = holders[i]
  res[#res + 1] = token or 0
  res[#res + 1] = tonumber(holders[i + 1])
  res[#res + 1] = since or 0
  res[#res + 1] = shared and 's' or 'x'
end
for _, id in ipairs(waiters) do
  local _, _, _, _, shared = lock_entry(base, id)
  res[#res + 1] = id
  res[#res + 1] = tonumber(redis.call('ZSCORE', lock_key(base, 'wait'), id)
                           or '0')
  res[#res + 1] = shared and 's' or 'x'
end
return res
