-- train: add to a parameter's global value, reading the worker's local copy
-- in the same step, exactly once per call.
--
-- Atomic so that no update is lost (the seed's read-add-write could lose
-- one) and so that a retried call can find the answer of its first try.
--
-- KEYS[1]  the global value, rb:p:{NAME}
-- KEYS[2]  the worker's local copy, rb:p:{NAME}:local:<worker>
-- KEYS[3]  the worker's last train call, rb:p:{NAME}:local:<worker>:train
--          (a JSON array [nonce, local, global]); all three share one tag
-- ARGV[1]  increment, a decimal number as text (includes/number.lua)
-- ARGV[2]  '1' when the increment has a fraction, else '0' (must agree)
-- ARGV[3]  nonce of this call
-- ARGV[4]  ttl in seconds (integer >= 1)
--
-- Returns {local, global}, both strings: the local copy as read, the global
-- value after the increment. A call whose nonce matches the last recorded
-- one returns the recorded pair and adds nothing.
--
-- Exact numbers or a refusal: an integer step on an integer value (or on
-- none) is INCRBY, exact in 64 bits; its overflow, a value past 64 bits, a
-- missing permission are errors and nothing is written. INCRBYFLOAT only
-- when the step or the value has a fraction. Values go back as Redis
-- prints them, never through a Lua double.

--- @include "includes/args.lua"
--- @include "includes/number.lua"
--- @include "includes/types.lua"

local by, by_frac = dec_arg(1, 'increment')
if ARGV[2] ~= (by_frac and '1' or '0') then bad_arg(2, 'float flag') end
local nonce = word_arg(3, 'nonce', false)
local ttl = int_arg(4, 'ttl', 1, 1e9)

want_type(KEYS[1], 'string')
want_type(KEYS[2], 'string')
want_type(KEYS[3], 'string')
local last = redis.call('GET', KEYS[3])
if last then
  local ok, rec = pcall(cjson.decode, last)
  if ok and type(rec) == 'table' and rec[1] == nonce then
    return {rec[2], rec[3]}
  end
end
local localv = redis.call('GET', KEYS[2]) or '0'
local current = redis.call('GET', KEYS[1])
local global
if not by_frac and (not current or is_int_text(current)) then
  local r = redis.pcall('INCRBY', KEYS[1], by)
  if type(r) == 'table' and r.err then
    if string.find(r.err, 'overflow', 1, true) then
      return redis.error_reply('ERR adding ' .. by .. ' to ' ..
                               (current or '0') .. ' would overflow a ' ..
                               '64-bit integer; nothing was changed')
    elseif current and string.find(r.err, 'out of range', 1, true) then
      return redis.error_reply('ERR the value ' .. current .. ' is ' ..
                               'outside the 64-bit integer range; ' ..
                               'nothing was changed')
    end
    return r
  end
  global = redis.call('GET', KEYS[1])
else
  global = redis.call('INCRBYFLOAT', KEYS[1], by)
  -- A nonzero step too small for the value's precision would be a lost
  -- update that looks like success: refuse it (the value is unchanged).
  if current and global == current and
     not string.match(by, '^%-?0%.0+$') then
    return redis.error_reply('ERR adding ' .. by .. ' to ' .. current ..
                             ' is below its float precision; nothing ' ..
                             'was changed')
  end
end
redis.call('EXPIRE', KEYS[1], ttl)
redis.call('SET', KEYS[3], cjson.encode({nonce, localv, global}), 'EX', ttl)
return {localv, global}
