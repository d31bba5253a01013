-- set: give a parameter's global value, with its expiry, in one step, and
-- wake every `get --until-set` waiting for it.
--
-- A script rather than SET ... EX so every write to rbarrier's keys goes
-- through the protocol's scripts and INCR-family commands only, and so the
-- value and its wake list never disagree.
--
-- KEYS[1]  the global value, rb:p:{NAME}; the wake list rb:p:{NAME}:set is
--          derived from it (same {NAME} tag, same slot): a list holding the
--          last value set, one element, which waiters read with a rotating
--          BLMOVE (the element stays, so every waiter and every later one
--          sees it; nobody polls)
-- ARGV[1]  the value, a decimal number as text (includes/number.lua)
-- ARGV[2]  ttl in seconds (integer >= 1)
--
-- Returns 'OK'.

--- @include "includes/args.lua"
--- @include "includes/number.lua"
--- @include "includes/types.lua"

local value = dec_arg(1, 'value')
local ttl = int_arg(2, 'ttl', 1, 1e9)
local wake = KEYS[1] .. ':set'
want_type(KEYS[1], 'string')
want_type(wake, 'list')
redis.call('SET', KEYS[1], value, 'EX', ttl)
-- Replaced whole: a push onto an empty list serves every blocked waiter.
redis.call('DEL', wake)
redis.call('RPUSH', wake, value)
redis.call('EXPIRE', wake, ttl)
return 'OK'
