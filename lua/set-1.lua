-- set: give a parameter's global value, with its expiry, in one step.
--
-- A script rather than SET ... EX so every write to rbarrier's keys goes
-- through the protocol's scripts and INCR-family commands only.
--
-- KEYS[1]  the global value, rb:{param:NAME}
-- ARGV[1]  the value, a decimal number as text (validated by the caller)
-- ARGV[2]  ttl in seconds (integer >= 1)
--
-- Returns 'OK'.

redis.call('SET', KEYS[1], ARGV[1], 'EX', tonumber(ARGV[2]))
return 'OK'
