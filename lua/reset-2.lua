-- reset: break the open round of a barrier with 'broken reset' and forget
-- its party count, so the next arrival starts a fresh round with any n.
--
-- Atomic so that no arrival can complete the round while it is being broken.
--
-- KEYS[1]  barrier base key, rb:{NAME}
-- KEYS[2]  the barrier's nonce hash, rb:{NAME}:nonce
-- ARGV[1]  linger of ended rounds in seconds (integer >= 1)
-- ARGV[2]  ttl of idle state in seconds (integer >= 1)
--
-- Returns {gen, members}: the generation that was broken and how many
-- parties were in it (0 when the barrier was idle or unknown).
-- A bad argument is an error reply, and nothing is written.

--- @include "includes/args.lua"
--- @include "includes/keys.lua"
--- @include "includes/round.lua"

local base, nonces = KEYS[1], KEYS[2]
if nonces ~= base .. ':nonce' then
  error({err = 'ERR KEYS[2] must be the barrier\'s nonce key'})
end
local linger = int_arg(1, 'linger', 1, 1e9)
local ttl = int_arg(2, 'ttl', 1, 1e9)

local gen = tonumber(redis.call('HGET', base, 'gen') or '0')
if gen == 0 then return {0, 0} end
local inkey, outkey = round_key(base, gen, 'in'), round_key(base, gen, 'out')
local members = redis.call('ZCARD', inkey)
if not redis.call('LINDEX', outkey, 0) then
  break_round(base, gen, inkey, outkey, 'reset', linger)
else
  redis.call('EXPIRE', inkey, linger)
  redis.call('HSET', base, 'gen', gen + 1)
  redis.call('HDEL', base, 'n')
end
redis.call('EXPIRE', base, ttl)
return {gen, members}
