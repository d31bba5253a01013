-- claim: the party whose arrival completed a --once round ('run' from
-- arrive) takes the run before it starts its command, only if the round
-- has no outcome yet. Between arrive and the command's start another
-- party may have broken the round (its timeout, a signal, a lease, a
-- reset): a command started then would do the round's work for a round
-- everyone else saw break.
--
-- Atomic because "no outcome yet" and "the run is taken" must be one step:
-- after it, a break can still come (the runner's heartbeats see it and
-- stop the command), but never before the check.
--
-- KEYS[1]  barrier base key, rb:b:{NAME}
-- KEYS[2]  the round's members, rb:b:{NAME}:<gen>:in
-- KEYS[3]  the round's outcome, rb:b:{NAME}:<gen>:out
--          (the round's run key, rb:b:{NAME}:<gen>:run, is derived from
--          KEYS[1]: same {NAME} tag, same slot)
-- ARGV[1]  gen, the round (integer >= 1)
-- ARGV[2]  party id: must be the runner arrive recorded
-- ARGV[3]  lease in milliseconds (integer >= 1)
-- ARGV[4]  linger of ended rounds in seconds (integer >= 1)
-- ARGV[5]  ttl of idle state in seconds (integer >= 1)
--
-- Returns one of
--   {'run'}            the run is this party's: start the command, then
--                      release (or abandon); the run key now holds
--                      '<id> running'
--   {'out', outcome}   the round already ended, possibly by this call (a
--                      member's lease ran out): do not start the command
--   {'lost'}           this party is not in the round (state lost)
-- A bad argument, a caller that is not the runner, or a key of the wrong
-- type is an error reply, and nothing is written. A repeated claim by the
-- runner answers 'run' again (a resend after a lost reply).

--- @include "includes/args.lua"
--- @include "includes/time.lua"
--- @include "includes/keys.lua"
--- @include "includes/round.lua"
--- @include "includes/types.lua"

local base, inkey, outkey = KEYS[1], KEYS[2], KEYS[3]
local gen = int_arg(1, 'gen', 1, 1e15)
local id = word_arg(2, 'id', false)
local lease = int_arg(3, 'lease ms', 1, 1e12)
local linger = int_arg(4, 'linger', 1, 1e9)
local ttl = int_arg(5, 'ttl', 1, 1e9)
check_round_keys(base, gen, inkey, outkey)
local runkey = round_key(base, gen, 'run')
want_type(base, 'hash')
want_type(inkey, 'zset')
want_type(outkey, 'list')
want_type(runkey, 'string')

local out = redis.call('LINDEX', outkey, 0)
if out then return {'out', out} end
if not redis.call('ZSCORE', inkey, id) then return {'lost'} end
local run = redis.call('GET', runkey)
if run ~= id and run ~= id .. ' running' then
  error({err = 'ERR ' .. id .. ' is not the once-runner of round ' .. gen})
end
if not redis.call('HGET', base, 'gen') then
  return {'out', break_round(base, gen, inkey, outkey,
                             'barrier state deleted', linger)}
end

local now = now_ms()
redis.call('ZADD', inkey, 'XX', now + lease, id)
local dead = redis.call('ZRANGEBYSCORE', inkey, '-inf', '(' .. now,
                        'LIMIT', 0, 1)
if #dead > 0 then
  return {'out', break_round(base, gen, inkey, outkey,
                             'lease of ' .. dead[1] .. ' expired', linger)}
end
local keep = open_expiry(ttl, lease)
redis.call('SET', runkey, id .. ' running', 'EX', keep)
redis.call('EXPIRE', inkey, keep)
return {'run'}
