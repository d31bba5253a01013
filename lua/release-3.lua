-- release: pass a round whose completing arrival ran its --once command
-- and saw it succeed.
--
-- Atomic because the outcome check and the push must not interleave with
-- another party breaking the round (a timeout, a lease, a reset): the first
-- outcome wins, for everyone.
--
-- KEYS[1]  barrier base key, rb:b:{NAME}
-- KEYS[2]  the round's members, rb:b:{NAME}:<gen>:in
-- KEYS[3]  the round's outcome, rb:b:{NAME}:<gen>:out
-- ARGV[1]  gen, the round to pass (integer >= 1)
-- ARGV[2]  party id: must be the round's runner, the one arrive answered
--          'run', and must have claimed the run (rb:b:{NAME}:<gen>:run
--          holds '<id> running')
-- ARGV[3]  linger of ended rounds in seconds (integer >= 1)
--
-- Returns {'out', outcome}: 'ok' pushed by this call, or the outcome that
-- was already there (then nothing was written).
-- A bad argument, or a caller that is not the runner, is an error reply,
-- and nothing is written.

--- @include "includes/args.lua"
--- @include "includes/keys.lua"
--- @include "includes/round.lua"
--- @include "includes/types.lua"

local base, inkey, outkey = KEYS[1], KEYS[2], KEYS[3]
local gen = int_arg(1, 'gen', 1, 1e15)
local id = word_arg(2, 'id', false)
local linger = int_arg(3, 'linger', 1, 1e9)
check_round_keys(base, gen, inkey, outkey)
want_type(inkey, 'zset')
want_type(outkey, 'list')
want_type(round_key(base, gen, 'run'), 'string')

local out = redis.call('LINDEX', outkey, 0)
if out then return {'out', out} end
if redis.call('GET', round_key(base, gen, 'run')) ~= id .. ' running' then
  error({err = 'ERR ' .. id .. ' has not claimed the once-run of round ' ..
               gen})
end
redis.call('RPUSH', outkey, 'ok')
history(base, {'k', 'b', 'e', 'pass', 'id', id, 'g', gen}, 'passed', nil)
linger_round(base, gen, inkey, outkey, linger)
return {'out', 'ok'}
