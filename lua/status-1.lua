#!lua flags=no-writes
-- status: a consistent snapshot of one barrier, for `rbarrier status`.
--
-- A script so the generation, its members and the last outcome are read at
-- one instant (no round can end between the reads).
--
-- KEYS[1]  barrier base key, rb:b:{NAME}
-- ARGV     none
--
-- Returns {gen, n, now_ms, last_outcome, id1, deadline1, id2, deadline2, ...}
--   gen           the open generation (0 if the barrier was never used,
--                 or its state expired)
--   n             the open round's party count (0 if nobody is in it)
--   now_ms        Redis TIME in milliseconds, to turn deadlines into leases
--   last_outcome  the previous round's outcome, '' if none is kept
--   idK/deadlineK the open round's members and lease deadlines (ms)

--- @include "includes/time.lua"
--- @include "includes/keys.lua"
--- @include "includes/types.lua"

local base = KEYS[1]
want_type(base, 'hash')
local gen = tonumber(redis.call('HGET', base, 'gen') or '0') or 0
-- n counts only while a round is open (c, its count, above 0).
local st = redis.call('HMGET', base, 'n', 'c')
local n = 0
if (tonumber(st[2] or '0') or 0) > 0 then n = tonumber(st[1]) or 0 end
local now = now_ms()
local last = ''
if gen > 1 then
  last = redis.call('LINDEX', round_key(base, gen - 1, 'out'), 0) or ''
end
local res = {gen, n, now, last}
if gen > 0 then
  local m = redis.call('ZRANGE', round_key(base, gen, 'in'), 0, -1,
                       'WITHSCORES')
  for i = 1, #m do res[#res + 1] = m[i] end
end
return res
