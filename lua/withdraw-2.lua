-- withdraw: take back an arrival whose own call failed (its reply was lost
-- for good, --replicas were not acknowledged, the party's deadline passed
-- during the call), so it counts for nobody: the round it was counted in
-- is broken, unless it already has an outcome.
--
-- The caller does not know the round (the arrival's reply is what it
-- lacks): the nonce of the failed call finds it, in the record of the
-- party's last arrival that arrive keeps (record_key, includes/round.lua).
-- A nonce that is not there means the arrival never ran.
--
-- Atomic because finding the round, checking for an outcome and breaking
-- it must not interleave with another arrival completing it.
--
-- KEYS[1]  barrier base key, rb:b:{NAME}
-- KEYS[2]  the barrier's nonce key, rb:b:{NAME}:nonce (checked, not read:
--          arrive keeps each party's last arrival in its own key)
--          (the round's keys rb:b:{NAME}:<gen>:in and :out are derived
--          from KEYS[1]: same {NAME} tag, same slot)
-- ARGV[1]  party id
-- ARGV[2]  nonce of the failed arrive call
-- ARGV[3]  what happened (1..300 bytes, no control characters), e.g.
--          'could not confirm its arrival (...)'
-- ARGV[4]  linger of ended rounds in seconds (integer >= 1)
--
-- Returns one of
--   {'none'}               the arrival never ran; nothing written
--   {'out', outcome}       the round it was counted in had already ended
--                          (then it did count); nothing written
--   {'broken', outcome}    this call broke that round: 'broken <id> <what>'
-- A bad argument, or a key of the wrong type, is an error reply, and
-- nothing is written.

--- @include "includes/args.lua"
--- @include "includes/keys.lua"
--- @include "includes/round.lua"
--- @include "includes/types.lua"

local base, nonces = KEYS[1], KEYS[2]
if nonces ~= base .. ':nonce' then
  error({err = 'ERR KEYS[2] must be the barrier\'s nonce key'})
end
local id = word_arg(1, 'id', false)
local nonce = word_arg(2, 'nonce', true)
local what = ARGV[3]
if type(what) ~= 'string' or #what == 0 or #what > 300 or
   string.find(what, '[%z\1-\31\127]') then
  bad_arg(3, 'what')
end
local linger = int_arg(4, 'linger', 1, 1e9)
-- The record of the id's last arrival (record_key, includes/round.lua).
local slot = record_key(base, id)
local prev = typed(slot, 'string', 'GET', slot)
local pnonce, pgen
if prev then pnonce, pgen = string.match(prev, '^(%S+) (%d+) %d+$') end
if not pnonce or pnonce ~= nonce then return {'none'} end
local gen = tonumber(pgen)
local inkey, outkey = round_key(base, gen, 'in'), round_key(base, gen, 'out')
want_type(inkey, 'zset')
want_type(outkey, 'list')
local out = redis.call('LINDEX', outkey, 0)
if out then return {'out', out} end
return {'broken', break_round(base, gen, inkey, outkey, id .. ' ' .. what,
                              linger)}
