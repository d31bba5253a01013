-- abandon: end a round this party is leaving early (its timeout expired, it
-- was interrupted, or its --once command failed), unless the round already
-- has an outcome, which then wins: a pass at the last millisecond is a pass.
--
-- Atomic because checking for an outcome and pushing ours must not let an
-- arrival complete the round in between.
--
-- KEYS[1]  barrier base key, rb:b:{NAME}
-- KEYS[2]  the round's members, rb:b:{NAME}:<gen>:in
-- KEYS[3]  the round's outcome, rb:b:{NAME}:<gen>:out
-- ARGV[1]  gen, the round being left (integer >= 1)
-- ARGV[2]  party id (a member of the round)
-- ARGV[3]  what happened, e.g. 'timed out after 30s' (1..300 bytes, no
--          control characters)
-- ARGV[4]  linger of ended rounds in seconds (integer >= 1)
-- ARGV[5]  'arrivals': the reason is '<id> <what> (k/n arrived: a,b,..)'
--          (the first few ids and the number of the rest: includes/roster.lua);
--          'plain': the reason is <what> as given. Either way the outcome
--          pushed is 'broken <reason>': only arrive passes a round.
-- With an --expect list (the open round's terms name its digest), the
-- 'arrivals' reason ends with '; missing: x,y' (bounded too). An ARGV[6]
-- (the list itself, from the previous build) is not read.
--
-- Returns one of
--   {'out', outcome}       an outcome was already there; nothing written
--   {'broken', outcome [, previous]}  this call broke the round with that
--                          outcome; previous is the outcome of the round
--                          before, when that one broke and this party was
--                          alone in this one (what it probably waited for)
--   {'lost'}               the caller is not in the round (state lost);
--                          nothing written
-- A bad argument is an error reply, and nothing is written.

--- @include "includes/args.lua"
--- @include "includes/keys.lua"
--- @include "includes/round.lua"
--- @include "includes/roster.lua"
--- @include "includes/types.lua"
--- @include "includes/expect.lua"

local base, inkey, outkey = KEYS[1], KEYS[2], KEYS[3]
local gen = int_arg(1, 'gen', 1, 1e15)
local id = word_arg(2, 'id', false)
local what = ARGV[3]
if type(what) ~= 'string' or #what == 0 or #what > 300 or
   string.find(what, '[%z\1-\31\127]') then
  bad_arg(3, 'what')
end
local linger = int_arg(4, 'linger', 1, 1e9)
local form = ARGV[5]
if form ~= 'arrivals' and form ~= 'plain' then bad_arg(5, 'form') end
check_round_keys(base, gen, inkey, outkey)
want_type(base, 'hash')
want_type(inkey, 'zset')
want_type(outkey, 'list')

local out = redis.call('LINDEX', outkey, 0)
if out then return {'out', out} end
if not redis.call('ZSCORE', inkey, id) then return {'lost'} end

local reason = what
local count = redis.call('ZCARD', inkey)
if form == 'arrivals' then
  -- A round the barrier moved past without an outcome is a complete
  -- --once round: its n is its member count.
  local n, expected = count, nil
  local st = redis.call('HMGET', base, 'gen', 'n', 'expect')
  if tonumber(st[1] or '0') == gen then
    n = st[2] or '?'
    if st[3] and st[3] ~= '' then
      -- The list's first ids, in its order (expect-store keeps them); of
      -- a list stored before that, a sample (distinct ids, at random).
      local xkey = expect_key(base, st[3])
      want_type(xkey, 'set')
      want_type(xkey .. ':f', 'string')
      local head = redis.call('GET', xkey .. ':f')
      if head then
        expected = roster_list(head)
      else
        expected = redis.call('SRANDMEMBER', xkey, ROSTER_LOOKUPS)
      end
    end
  end
  reason = id .. ' ' .. what .. ' (' ..
           roster(inkey, count, n, 'arrived', expected) .. ')'
end
local res = {'broken', break_round(base, gen, inkey, outkey, reason, linger)}
if count == 1 and gen > 1 then
  local prev = redis.call('LINDEX', round_key(base, gen - 1, 'out'), 0)
  if prev and string.sub(prev, 1, 7) == 'broken ' then res[3] = prev end
end
return res
