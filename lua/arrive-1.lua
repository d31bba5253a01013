-- arrive: register one party in the open round of a barrier.
--
-- Atomic because the count check, the lease entry and the round's end must
-- be one step: two parties completing the same round at once would
-- otherwise both push an outcome, or neither.
--
-- KEYS[1]  barrier base key, rb:{NAME}. The per-round keys are derived from
--          it (rb:{NAME}:<gen>:in, rb:{NAME}:<gen>:out, rb:{NAME}:nonce); they
--          share its {NAME} hash tag, so they live in the same cluster slot.
-- ARGV[1]  party id (string, no whitespace)
-- ARGV[2]  nonce of this wait call (string)
-- ARGV[3]  n, the party count the caller expects (integer >= 1)
-- ARGV[4]  lease in milliseconds (integer >= 1)
-- ARGV[5]  ttl of idle state in seconds (integer >= 1)
-- ARGV[6]  linger of ended rounds in seconds (integer >= 1)
--
-- Returns one of
--   {'wait', gen, count, n}   arrived; block on the round's out list
--   {'done', gen, count, n}   this arrival completed the round ('ok' pushed)
--   {'badn', open_n}          the open round was fixed at another n; nothing
--                             was written
-- A retried call with the same (id, nonce) gets its first answer back: the
-- same gen and count, 'done' if that arrival completed the round, else
-- 'wait' (on that gen, whose out list may already hold the outcome). So a
-- lost reply never counts an arrival twice, never moves it to a later
-- round, and the party that completed a round still knows it did. The
-- nonces hash keeps '<nonce> <gen> <count>' per id.

local base = KEYS[1]
local id, nonce = ARGV[1], ARGV[2]
local n, lease, ttl, linger = tonumber(ARGV[3]), tonumber(ARGV[4]),
                              tonumber(ARGV[5]), tonumber(ARGV[6])
local nonces = base .. ':nonce'

local prev = redis.call('HGET', nonces, id)
if prev then
  local pnonce, pgen, pcount = string.match(prev, '^(%S+) (%d+) ?(%d*)$')
  if pnonce == nonce then
    pcount = tonumber(pcount) or 0
    if pcount >= n then return {'done', tonumber(pgen), pcount, n} end
    return {'wait', tonumber(pgen), pcount, n}
  end
end

local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)

local state = redis.call('HMGET', base, 'gen', 'n')
local gen = tonumber(state[1] or '1')
local open_n = state[2]

-- A round whose member let its lease run out is dead: nobody will complete
-- it. Break it for anyone still blocked on it, then join a fresh round.
if open_n then
  local inkey = base .. ':' .. gen .. ':in'
  local dead = redis.call('ZRANGEBYSCORE', inkey, '-inf', '(' .. now,
                          'LIMIT', 0, 1)
  if #dead > 0 and dead[1] ~= id then
    local outkey = base .. ':' .. gen .. ':out'
    redis.call('RPUSH', outkey, 'broken lease of ' .. dead[1] .. ' expired')
    redis.call('EXPIRE', outkey, linger)
    redis.call('EXPIRE', inkey, linger)
    gen = gen + 1
    open_n = false
    redis.call('HDEL', base, 'n')
  end
end

if open_n and tonumber(open_n) ~= n then
  return {'badn', tonumber(open_n)}
end

local inkey = base .. ':' .. gen .. ':in'
local outkey = base .. ':' .. gen .. ':out'
redis.call('ZADD', inkey, now + lease, id)
local count = redis.call('ZCARD', inkey)
redis.call('HSET', nonces, id, nonce .. ' ' .. gen .. ' ' .. count)
redis.call('EXPIRE', nonces, ttl)

if count >= n then
  redis.call('RPUSH', outkey, 'ok')
  redis.call('EXPIRE', outkey, linger)
  redis.call('EXPIRE', inkey, linger)
  redis.call('HSET', base, 'gen', gen + 1)
  redis.call('HDEL', base, 'n')
  redis.call('EXPIRE', base, ttl)
  return {'done', gen, count, n}
end

-- The round's first arrival fixes n and the expiries; later arrivals of the
-- same round find them set (fewer calls per round on the hot path).
if count == 1 then
  redis.call('HSET', base, 'gen', gen, 'n', n)
  redis.call('EXPIRE', base, ttl)
  redis.call('EXPIRE', inkey, ttl)
end
return {'wait', gen, count, n}
