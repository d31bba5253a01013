-- train: add to a parameter's global value, reading the worker's local copy
-- in the same step, exactly once per call.
--
-- Atomic so that no update is lost (the seed's read-add-write could lose
-- one) and so that a retried call can find the answer of its first try.
--
-- KEYS[1]  the global value, rb:{param:NAME}
-- KEYS[2]  the worker's local copy, rb:{param:NAME}:local:<worker>
-- KEYS[3]  the worker's last train call, rb:{param:NAME}:local:<worker>:train
--          ('<nonce> <local> <global>'); all three share one hash tag
-- ARGV[1]  increment, a decimal number as text
-- ARGV[2]  '1' to add with INCRBYFLOAT, '0' for INCRBY (INCRBYFLOAT
--          when the global already holds a fraction)
-- ARGV[3]  nonce of this call
-- ARGV[4]  ttl in seconds (integer >= 1)
--
-- Returns {local, global}, both strings: the local copy as read, the global
-- value after the increment. A call whose nonce matches the last recorded
-- one returns the recorded pair and adds nothing.

local by, float, nonce, ttl = ARGV[1], ARGV[2] == '1', ARGV[3],
                              tonumber(ARGV[4])
local last = redis.call('GET', KEYS[3])
if last then
  local lnonce, llocal, lglobal = string.match(last, '^(%S+) (%S+) (%S+)$')
  if lnonce == nonce then return {llocal, lglobal} end
end
local localv = redis.call('GET', KEYS[2]) or '0'
local global
if not float then
  -- An integer step on a global that already holds a fraction (after a
  -- float train) must still add, so fall back to the float command.
  local r = redis.pcall('INCRBY', KEYS[1], by)
  if type(r) == 'number' then global = tostring(r) else float = true end
end
if float then
  global = redis.call('INCRBYFLOAT', KEYS[1], by)
end
redis.call('EXPIRE', KEYS[1], ttl)
redis.call('SET', KEYS[3], nonce .. ' ' .. localv .. ' ' .. global, 'EX', ttl)
return {localv, global}
