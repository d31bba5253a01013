-- lock-renew: a holder renews its lease while its command runs.
--
-- Atomic because the holder's entry must not be renewed after a waiter's
-- acquire expired it and granted its slot to another.
--
-- KEYS[1]  the lock's base key, rb:l:{NAME} (derived keys: includes/lock.lua)
-- KEYS[2]  the keeper of the name's slot (includes/keeper.lua)
-- ARGV[1]  id of the holder
-- ARGV[2]  nonce of the acquire that was granted
-- ARGV[3]  lease in milliseconds (integer >= 1)
-- ARGV[4]  ttl of idle state in seconds (integer >= 1)
--
-- Returns one of
--   {'held', token}  renewed: the lease runs lease ms from now
--   {'lost'}         the slot is no longer this holder's (its lease ran
--                    out, or a reset revoked it); an expired entry is
--                    dropped and its slot granted on
--   {'gone'}         no entry and no fencing counter: the lock's state
--                    was lost (FLUSHALL, eviction, a restart without
--                    persistence), which a reset never does
-- A bad argument is an error reply, and nothing is written.

--- @include "includes/args.lua"
--- @include "includes/time.lua"
--- @include "includes/keys.lua"
--- @include "includes/lock.lua"

local base = KEYS[1]
local id = word_arg(1, 'id', false)
local nonce = word_arg(2, 'nonce', false)
local lease = int_arg(3, 'lease ms', 1, 1e12)
local ttl = int_arg(4, 'ttl', 1, 1e9)
local holders = lock_key(base, 'holders')
local st = lock_state(base, id)
local now = now_ms()

local had, _, token = lock_parse(base, id, st.entry)
if not had and not redis.call('GET', lock_key(base, 'token')) then
  return {'gone'}
end
if had ~= nonce then return {'lost'} end
local deadline = tonumber(redis.call('ZSCORE', holders, id))
if not deadline then return {'lost'} end
local w = {}
if deadline < now then
  local dl = lock_expire(base, now, st.dl, w, ttl)
  if not lock_quarantine(base, st, now, w) then
    lock_grant(base, tonumber(st.max or '1') or 1, now, ttl, nil, nil, w, dl,
               nil, st.sh)
  end
  lock_write(base, w)
  return {'lost'}
end
-- A later deadline leaves dl a lower bound: no write of the hash.
redis.call('ZADD', holders, now + lease, id)
keeper_hold(base, now + lease)
if lock_due(st, now, ttl, w) then
  lock_write(base, w)
  lock_refresh(base, ttl)
end
return {'held', token}
