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
-- revoked holder learns it at its next renewal ('lost'), stops its
-- command and confirms with a release; until each has confirmed or its
-- lease has passed, nothing is granted (rq and revoked, in
-- includes/lock.lua). A waiter is woken at once by 'reset' on its wake
-- list.

--- @include "includes/time.lua"
--- @include "includes/keys.lua"
--- @include "includes/lock.lua"
--- @include "includes/history.lua"

local base = KEYS[1]
local now = now_ms()
local holders = redis.call('ZRANGE', lock_key(base, 'holders'), 0, -1,
                           'WITHSCORES')
local waiters = redis.call('ZRANGE', lock_key(base, 'queue'), 0, -1)
local revoked = lock_key(base, 'revoked')
for _, id in ipairs(waiters) do
  local wake = lock_key(base, 'wake:' .. id)
  redis.call('DEL', wake)
  redis.call('RPUSH', wake, 'reset')
  redis.call('EXPIRE', wake, 60)
end
-- A quarantine still running from an earlier reset goes on.
local rq = tonumber(redis.call('HGET', base, 'rq') or '')
for i = 1, #holders, 2 do
  local id, deadline = holders[i], tonumber(holders[i + 1])
  redis.call('DEL', lock_key(base, 'wake:' .. id))
  local nonce = lock_entry(base, id)
  if nonce and deadline >= now then
    redis.call('ZADD', revoked, deadline, nonce)
    if not rq or deadline > rq then rq = deadline end
  end
end
redis.call('DEL', base, lock_key(base, 'holders'), lock_key(base, 'queue'),
           lock_key(base, 'wait'))
-- The keeper's record of the revoked holders (includes/keeper.lua) stays:
-- the quarantine below lives in the name's own keys, which may be lost
-- too; lock_quarantine drops the record once the revoked holders are done.
if rq and rq >= now then
  -- The base hash keeps the quarantine alone: the next acquire may still
  -- use any max.
  local secs = math.ceil((rq - now) / 1000) + 60
  redis.call('HSET', base, 'rq', string.format('%.0f', rq))
  redis.call('EXPIRE', base, secs)
  redis.call('EXPIRE', revoked, secs)
end
history_lock(base, 'reset', nil, nil, nil)
return {#holders / 2, #waiters}
