-- lock-reset: revoke every holder and send every waiter away, so the lock
-- is free and the next acquire may use any max. The fencing counter stays:
-- tokens go on growing after a reset.
--
-- Atomic so that no grant can slip in between the revocation and the
-- wake-ups.
--
-- KEYS[1]  the lock's base key, rb:l:{NAME} (derived keys: includes/lock.lua)
-- ARGV     none
--
-- Returns {holders, waiters}: how many were revoked and sent away. A
-- revoked holder learns it at its next renewal ('lost'); a waiter is woken
-- at once by 'reset' on its wake list.

--- @include "includes/keys.lua"
--- @include "includes/history.lua"

local base = KEYS[1]
local holders = redis.call('ZRANGE', lock_key(base, 'holders'), 0, -1)
local waiters = redis.call('ZRANGE', lock_key(base, 'queue'), 0, -1)
for _, id in ipairs(waiters) do
  local wake = lock_key(base, 'wake:' .. id)
  redis.call('DEL', wake)
  redis.call('RPUSH', wake, 'reset')
  redis.call('EXPIRE', wake, 60)
end
for _, id in ipairs(holders) do
  redis.call('DEL', lock_key(base, 'wake:' .. id))
end
redis.call('DEL', base, lock_key(base, 'holders'), lock_key(base, 'queue'),
           lock_key(base, 'wait'))
history_lock(base, 'reset', nil, nil, nil)
return {#holders, #waiters}
