-- heartbeat: renew this party's lease between two wait slices, keep the
-- open round's keys alive, and break the round if any other party's lease
-- has run out.
--
-- Atomic because "is there an outcome?", "is anyone dead?" and "break it"
-- must not interleave with an arrival completing the same round.
--
-- KEYS[1]  barrier base key, rb:b:{NAME}
-- KEYS[2]  the round's members, rb:b:{NAME}:<gen>:in
-- KEYS[3]  the round's outcome, rb:b:{NAME}:<gen>:out
-- KEYS[4]  the barrier's nonce key, rb:b:{NAME}:nonce: its string marker
--          is renewed with the barrier hash (mark_nonces, includes/round.lua)
-- ARGV[1]  gen, the round this party is waiting in (integer >= 1)
-- ARGV[2]  party id
-- ARGV[3]  lease in milliseconds (integer >= 1)
-- ARGV[4]  linger of ended rounds in seconds (integer >= 1)
-- ARGV[5]  ttl of idle state in seconds (integer >= 1)
-- ARGV[6]  optional: '1' to have the round's member ids listed in the
--          'wait' reply (for progress that names who is missing), when
--          no more than HEARTBEAT_LIST_MAX (64) are in
--
-- Returns one of
--   {'out', outcome}       the round has ended ('ok' or 'broken <reason>');
--                          possibly just now, by this call
--   {'wait', count, n [, id, id, ...]}  still open (or its --once command
--                          runs); lease and the round's keys renewed; n is
--                          0 once the round is complete
--   {'lost'}               this party's entry in the round is gone: the
--                          state was lost (Redis restarted empty, or the
--                          keys were deleted or expired); the round, if the
--                          barrier still holds it open, is broken for
--                          whoever is left in it ('broken state of round G lost: ID is no
--                          longer in it'), so no late party passes on it
-- A round whose barrier hash is gone (deleted by hand, or deleted and
-- recreated by a later arrival) is broken with 'broken barrier state
-- deleted': nobody can pass on a round the barrier no longer knows.
-- A bad argument, or a key of the wrong type, is an error reply, and
-- nothing is written.

--- @include "includes/args.lua"
--- @include "includes/time.lua"
--- @include "includes/keys.lua"
--- @include "includes/round.lua"
--- @include "includes/types.lua"
--- @include "includes/expect.lua"

local base, inkey, outkey, nonces = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local gen = int_arg(1, 'gen', 1, 1e15)
local id = word_arg(2, 'id', false)
local lease = int_arg(3, 'lease ms', 1, 1e12)
local linger = int_arg(4, 'linger', 1, 1e9)
local ttl = int_arg(5, 'ttl', 1, 1e9)
local list = ARGV[6]
local HEARTBEAT_LIST_MAX = 64
if list ~= nil and list ~= '0' and list ~= '1' then bad_arg(6, 'list') end
check_round_keys(base, gen, inkey, outkey)
if nonces ~= base .. ':nonce' then
  error({err = 'ERR KEYS[4] must be the barrier\'s nonce key'})
end

-- One read of the outcome, one of the barrier's state (gen, n, the count,
-- the earliest deadline dl and the expiries ex and bx of includes/round.lua),
-- and the renewal, which also says whether this party is in the round: a
-- heartbeat that finds everything well runs four commands.
local out = typed(outkey, 'list', 'LINDEX', outkey, 0)
local now = now_ms()
local st = typed(base, 'hash', 'HMGET', base, 'gen', 'n', 'c', 'dl', 'ex',
                 'bx', 'expect')
-- Whether this round is the barrier's open one (else it is a complete
-- --once round whose command runs, or a round the barrier lost).
-- (A field damaged by hand reads as absent: the round is then read in
-- full and its expiries renewed.)
local open = tonumber(st[1] or '0') == gen and
             (tonumber(st[3] or '0') or 0) > 0
local mine
if out then
  mine = typed(inkey, 'zset', 'ZSCORE', inkey, id)
else
  -- CH counts a changed score: 0 is a party not in the round, or one
  -- renewed twice in the same millisecond.
  mine = typed(inkey, 'zset', 'ZADD', inkey, 'XX', 'CH', now + lease, id) == 1
         or redis.call('ZSCORE', inkey, id)
end
-- This party's entry first: a round it is not in is not its round, even
-- when an outcome is there (a server that restarted empty can reach the
-- same gen number again with other parties).
if not mine then
  -- Only a round the barrier still holds open is broken: on a server
  -- that restarted empty nothing is recreated.
  if not out and tonumber(st[1] or '0') == gen then
    break_round(base, gen, inkey, outkey, 'state of round ' .. gen ..
                ' lost: ' .. id .. ' is no longer in it', linger)
  end
  return {'lost'}
end
if out then return {'out', out} end
-- Every step that moves the barrier past a round pushes its outcome first,
-- or (a --once round) records its runner: a round the barrier no longer
-- holds, with neither, had its barrier hash deleted (maybe recreated since
-- by a newcomer's arrival, in a round of its own).
if not st[1] or (tonumber(st[1]) ~= gen and
   redis.call('TYPE', round_key(base, gen, 'run'))['ok'] == 'none') then
  return {'out', break_round(base, gen, inkey, outkey,
                             'barrier state deleted', linger)}
end

-- No lease has run out while the earliest deadline the round can hold is
-- ahead; once it has passed, the earliest member decides, and its
-- deadline becomes the new bound.
local dl = tonumber(st[4] or '')
if not open or not dl or dl < now then
  local first = redis.call('ZRANGE', inkey, 0, 0, 'WITHSCORES')
  if first[1] and tonumber(first[2]) < now then
    return {'out', break_round(base, gen, inkey, outkey,
                               'lease of ' .. first[1] .. ' expired', linger)}
  end
  if open and first[2] then redis.call('HSET', base, 'dl', first[2]) end
elseif now + lease < dl then
  -- dl bounds every member's deadline only if no renewal ends before it:
  -- a shorter lease under the same id, or a server clock stepped back.
  redis.call('HSET', base, 'dl', now + lease)
end

-- While anyone waits, nothing of the open round may expire (--ttl is for
-- idle state): its keys live keep seconds from their last renewal, renewed
-- once fewer than two leases are left.
local ex, bx = tonumber(st[5] or '0') or 0, tonumber(st[6] or '0') or 0
if not open or math.min(ex, bx) < now + 2 * lease then
  local keep = open_expiry(ttl, lease)
  redis.call('EXPIRE', inkey, keep)
  redis.call('EXPIRE', base, keep)
  mark_nonces(nonces, keep)
  redis.call('EXPIRE', round_key(base, gen, 'val'), keep)
  redis.call('EXPIRE', round_key(base, gen, 'run'), keep)
  if open and st[7] and #st[7] == 40 then
    redis.call('EXPIRE', expect_key(base, st[7]), keep)
  end
  -- bx is exact again (this may have shortened the hash's life, for a
  -- party with a shorter ttl); ex only for the open round.
  local at = now + keep * 1000
  if open then
    redis.call('HSET', base, 'ex', at, 'bx', at)
  else
    redis.call('HSET', base, 'bx', at)
  end
end
local res = {'wait', 0, 0}
if open then res[2], res[3] = tonumber(st[3]), tonumber(st[2] or '0') or 0 end
if list == '1' or not open then res[2] = redis.call('ZCARD', inkey) end
-- Listed only while a few are in: progress names the missing ids of a
-- small round, and a heartbeat must not cost O(N) (every party sends one
-- per slice).
if list == '1' and res[2] <= HEARTBEAT_LIST_MAX then
  local m = redis.call('ZRANGE', inkey, 0, -1)
  for i = 1, #m do res[#res + 1] = m[i] end
end
return res
