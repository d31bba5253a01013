-- set: give a parameter's global value, with its expiry, in one step.
--
-- A script rather than SET ... EX so every write to rbarrier's keys goes
-- through the protocol's scripts and INCR-family commands only.
--
-- KEYS[1]  the global value, rb:p:{NAME}
-- ARGV[1]  the value, a decimal number as text (includes/number.lua)
-- ARGV[2]  ttl in seconds (integer >= 1)
--
-- Returns 'OK'.

--- @include "includes/args.lua"
--- @include "includes/number.lua"
--- @include "includes/types.lua"

local value = dec_arg(1, 'value')
local ttl = int_arg(2, 'ttl', 1, 1e9)
want_type(KEYS[1], 'string')
redis.call('SET', KEYS[1], value, 'EX', ttl)
return 'OK'
