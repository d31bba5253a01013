-- lock-renew: a holder renews its lease while its command runs.
--
-- Atomic because the holder's entry must not be renewed after a waiter's
-- acquire expired it and granted its slot to another.
--
-- KEYS[1]  the lock's base key, rb:l:{NAME} (derived keys: includes/lock.lua)
-- ARGV[1]  id of the holder
-- ARGV[2]  nonce of the acquire that was granted
-- ARGV[3]  lease in milliseconds (integer >= 1)
-- ARGV[4]  ttl of idle state in seconds (integer >= 1)
--
-- Returns one of
--   {'held', token}  renewed: the lease runs lease ms from now
--   {'lost'}         the slot is no longer this holder's (its lease ran
--                    out, a reset revoked it, or the state is gone); an
--                    expired entry is dropped and its slot granted on
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
local now = now_ms()

local deadline = tonumber(redis.call('ZSCORE', holders, id))
if not deadline then return {'lost'} end
local had, _, token = lock_entry(base, id)
if had ~= nonce then return {'lost'} end
if deadline < now then
  lock_expire(base, now)
  lock_grant(base, tonumber(redis.call('HGET', base, 'max') or '1') or 1,
             now, ttl, nil)
  return {'lost'}
end
redis.call('ZADD', holders, now + lease, id)
lock_touch(base, now, ttl)
return {'held', token}
