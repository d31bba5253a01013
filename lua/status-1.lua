#!lua flags=no-writes
-- status: a consistent snapshot of one barrier, for `rbarrier status`.
--
-- A script so the generation, its members and the last outcome are read at
-- one instant (no round can end between the reads).
--
-- KEYS[1]  barrier base key, rb:{NAME}; per-round keys derived from it share
--          its hash tag.
-- ARGV     none
--
-- Returns {gen, n, now_ms, last_outcome, id1, deadline1, id2, deadline2, ...}
--   gen           the open generation (0 if the barrier was never used)
--   n             the open round's party count (0 if nobody is in it)
--   now_ms        Redis TIME in milliseconds, to turn deadlines into leases
--   last_outcome  the previous round's outcome, '' if none is kept
--   idK/deadlineK the open round's members and lease deadlines (ms)

local base = KEYS[1]
local gen = tonumber(redis.call('HGET', base, 'gen') or '0')
local n = tonumber(redis.call('HGET', base, 'n') or '0')
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local last = ''
if gen > 1 then
  last = redis.call('LINDEX', base .. ':' .. (gen - 1) .. ':out', 0) or ''
end
local res = {gen, n, now, last}
if gen > 0 then
  local m = redis.call('ZRANGE', base .. ':' .. gen .. ':in', 0, -1,
                       'WITHSCORES')
  for i = 1, #m do res[#res + 1] = m[i] end
end
return res
