-- sync: copy a parameter's global value into one worker's local copy.
--
-- Atomic so the copy is one instant's value of the global, never a torn
-- read beside a concurrent train.
--
-- KEYS[1]  the global value, rb:p:{NAME}
-- KEYS[2]  the worker's local copy, rb:p:{NAME}:local:<worker>
--          (same {param:NAME} hash tag, same cluster slot)
-- ARGV[1]  ttl in seconds (integer >= 1)
--
-- Returns the copied value as a string ('0' for a parameter never set).

--- @include "includes/args.lua"
--- @include "includes/types.lua"

local ttl = int_arg(1, 'ttl', 1, 1e9)
-- The value as Redis holds it: a string, copied byte for byte.
want_type(KEYS[1], 'string')
want_type(KEYS[2], 'string')
local value = redis.call('GET', KEYS[1]) or '0'
redis.call('SET', KEYS[2], value, 'EX', ttl)
return value
