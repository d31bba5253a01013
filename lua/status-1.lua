#!lua flags=no-writes
-- status: a consistent snapshot of one barrier, for `rbarrier status`.
--
-- A script so the generation, its members and the last outcome are read at
-- one instant (no round can end between the reads).
--
-- KEYS[1]  barrier base key, rb:b:{NAME}
-- ARGV[1]  optional: list members from this lease deadline (ms; default
--          '-inf'), ARGV[2] skipping this many at it (listed before),
--          ARGV[3] listing at most this many (1..1000, the default): a
--          round of 100,000 is read in pages, so no call blocks Redis
--          long (a snapshot per page; the gen says whether the round is
--          still the same)
--
-- Returns {gen, n, now_ms, last_outcome, id1, deadline1, id2, deadline2, ...}
--   gen           the open generation (0 if the barrier was never used,
--                 or its state expired)
--   n             the open round's party count (0 if nobody is in it)
--   now_ms        Redis TIME in milliseconds, to turn deadlines into leases
--   last_outcome  the previous round's outcome, '' if none is kept
--   idK/deadlineK the open round's members and lease deadlines (ms), in
--                 order of deadline (of ids at one deadline, by id)

--- @include "includes/args.lua"
--- @include "includes/time.lua"
--- @include "includes/keys.lua"
--- @include "includes/types.lua"

local STATUS_PAGE_MAX = 1000
local base = KEYS[1]
local from, skip, limit = '-inf', 0, STATUS_PAGE_MAX
if ARGV[1] ~= nil then
  if ARGV[1] ~= '-inf' then from = int_arg(1, 'from', 0, 1e15) end
  skip = int_arg(2, 'skip', 0, 100000)
  limit = int_arg(3, 'limit', 1, STATUS_PAGE_MAX)
end
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
  local m = redis.call('ZRANGEBYSCORE', round_key(base, gen, 'in'), from,
                       '+inf', 'WITHSCORES', 'LIMIT', skip, limit)
  for i = 1, #m do res[#res + 1] = m[i] end
end
return res
