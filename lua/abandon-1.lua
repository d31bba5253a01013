-- abandon: end a round this party is leaving early (its timeout expired, it
-- was interrupted, or its --once command failed), unless the round already
-- has an outcome, which then wins: a pass at the last millisecond is a pass.
--
-- Atomic because checking for an outcome and pushing ours must not let an
-- arrival complete the round in between.
--
-- KEYS[1]  barrier base key, rb:{NAME}; per-round keys derived from it share
--          its hash tag.
-- ARGV[1]  gen, the round being left (integer)
-- ARGV[2]  party id
-- ARGV[3]  what happened, e.g. 'timed out after 30s' or 'interrupted'
-- ARGV[4]  linger of ended rounds in seconds
-- ARGV[5]  '1' to give the reason verbatim (a --once command's outcome),
--          '0' to prefix the id and append who had arrived
--
-- Returns one of
--   {'out', outcome}       an outcome was already there; nothing written
--   {'broken', outcome}    this call broke the round with that outcome

local base = KEYS[1]
local gen, id, what = ARGV[1], ARGV[2], ARGV[3]
local linger, verbatim = tonumber(ARGV[4]), ARGV[5] == '1'
local inkey = base .. ':' .. gen .. ':in'
local outkey = base .. ':' .. gen .. ':out'

local out = redis.call('LINDEX', outkey, 0)
if out then return {'out', out} end

local reason
if verbatim then
  reason = what
else
  local members = redis.call('ZRANGE', inkey, 0, -1)
  local n = redis.call('HGET', base, 'n') or '?'
  reason = 'broken ' .. id .. ' ' .. what .. ' (' .. #members .. '/' .. n ..
           ' arrived: ' .. table.concat(members, ',') .. ')'
end
redis.call('RPUSH', outkey, reason)
redis.call('EXPIRE', outkey, linger)
redis.call('EXPIRE', inkey, linger)
if tonumber(redis.call('HGET', base, 'gen') or '0') == tonumber(gen) then
  redis.call('HSET', base, 'gen', tonumber(gen) + 1)
  redis.call('HDEL', base, 'n')
end
return {'broken', reason}
