-- heartbeat: renew this party's lease between two wait slices, and break
-- the round if any other party's lease has run out.
--
-- Atomic because "is there an outcome?", "is anyone dead?" and "break it"
-- must not interleave with an arrival completing the same round.
--
-- KEYS[1]  barrier base key, rb:{NAME}; per-round keys derived from it share
--          its hash tag.
-- ARGV[1]  gen, the round this party is waiting in (integer)
-- ARGV[2]  party id
-- ARGV[3]  lease in milliseconds
-- ARGV[4]  linger of ended rounds in seconds
--
-- Returns one of
--   {'out', outcome}       the round has ended ('ok' or 'broken <reason>');
--                          possibly just now, by this call
--   {'wait', count, n}     still open; lease renewed
--   {'lost'}               this party's entry in the round is gone: the
--                          state was lost (Redis restarted empty, or the
--                          keys were deleted or expired)

local base = KEYS[1]
local gen, id = ARGV[1], ARGV[2]
local lease, linger = tonumber(ARGV[3]), tonumber(ARGV[4])
local inkey = base .. ':' .. gen .. ':in'
local outkey = base .. ':' .. gen .. ':out'

-- This party's entry first: a round it is not in is not its round, even
-- when an outcome is there (a server that restarted empty can reach the
-- same gen number again with other parties).
if not redis.call('ZSCORE', inkey, id) then return {'lost'} end

local out = redis.call('LINDEX', outkey, 0)
if out then return {'out', out} end

local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZADD', inkey, 'XX', now + lease, id)

local dead = redis.call('ZRANGEBYSCORE', inkey, '-inf', '(' .. now,
                        'LIMIT', 0, 1)
if #dead > 0 then
  local reason = 'broken lease of ' .. dead[1] .. ' expired'
  redis.call('RPUSH', outkey, reason)
  redis.call('EXPIRE', outkey, linger)
  redis.call('EXPIRE', inkey, linger)
  if tonumber(redis.call('HGET', base, 'gen') or '0') == tonumber(gen) then
    redis.call('HSET', base, 'gen', tonumber(gen) + 1)
    redis.call('HDEL', base, 'n')
  end
  return {'out', reason}
end

return {'wait', redis.call('ZCARD', inkey),
        tonumber(redis.call('HGET', base, 'n') or '0')}
