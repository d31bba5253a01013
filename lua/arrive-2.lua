-- arrive: register one party in the open round of a barrier.
--
-- Atomic because the count check, the lease entry and the round's end must
-- be one step: two parties completing the same round at once would
-- otherwise both push an outcome, or neither.
--
-- KEYS[1]  barrier base key, rb:{NAME} (hash: gen, n). The round's keys
--          (rb:{NAME}:<gen>:in, :out) are derived from it, as the caller
--          cannot know gen before this script reads it.
-- KEYS[2]  the barrier's nonce hash, rb:{NAME}:nonce
-- ARGV[1]  party id (1..200 bytes, no whitespace, braces or commas)
-- ARGV[2]  nonce of this wait call (no whitespace)
-- ARGV[3]  n, the party count the caller expects (integer 1..100000)
-- ARGV[4]  lease in milliseconds (integer >= 1)
-- ARGV[5]  ttl of idle state in seconds (integer >= 1)
-- ARGV[6]  linger of ended rounds in seconds (integer >= 1)
--
-- Returns one of
--   {'wait', gen, count, n}   arrived; block on the round's out list
--   {'done', gen, count, n}   this arrival completed the round ('ok' pushed)
--   {'badn', open_n}          the open round was fixed at another n; nothing
--                             was written
-- A bad argument is an error reply, and nothing is written.
-- A retried call with the same (id, nonce) gets its first answer back: the
-- same gen and count, 'done' if that arrival completed the round, else
-- 'wait' (on that gen, whose out list may already hold the outcome). So a
-- lost reply never counts an arrival twice, never moves it to a later
-- round, and the party that completed a round still knows it did. The
-- nonces hash keeps '<nonce> <gen> <count>' per id.

--- @include "includes/args.lua"
--- @include "includes/time.lua"
--- @include "includes/keys.lua"
--- @include "includes/round.lua"

local base, nonces = KEYS[1], KEYS[2]
if nonces ~= base .. ':nonce' then
  error({err = 'ERR KEYS[2] must be the barrier\'s nonce key'})
end
local id = word_arg(1, 'id', false)
local nonce = word_arg(2, 'nonce', true)
local n = int_arg(3, 'n', 1, 100000)
local lease = int_arg(4, 'lease ms', 1, 1e12)
local ttl = int_arg(5, 'ttl', 1, 1e9)
local linger = int_arg(6, 'linger', 1, 1e9)

local prev = redis.call('HGET', nonces, id)
if prev then
  local pnonce, pgen, pcount = string.match(prev, '^(%S+) (%d+) ?(%d*)$')
  if pnonce == nonce then
    pcount = tonumber(pcount) or 0
    if pcount >= n then return {'done', tonumber(pgen), pcount, n} end
    return {'wait', tonumber(pgen), pcount, n}
  end
end

local now = now_ms()
local state = redis.call('HMGET', base, 'gen', 'n')
local gen = tonumber(state[1] or '1') or 1
local open_n = state[2]
local inkey, outkey = round_key(base, gen, 'in'), round_key(base, gen, 'out')

-- A round whose member let its lease run out is dead: nobody will complete
-- it. Break it for anyone still blocked on it, then join a fresh round.
if open_n then
  local dead = redis.call('ZRANGEBYSCORE', inkey, '-inf', '(' .. now,
                          'LIMIT', 0, 1)
  if #dead > 0 and dead[1] ~= id then
    break_round(base, gen, inkey, outkey,
                'lease of ' .. dead[1] .. ' expired', linger)
    gen = gen + 1
    open_n = false
    inkey, outkey = round_key(base, gen, 'in'), round_key(base, gen, 'out')
  end
end

if open_n and tonumber(open_n) ~= n then
  return {'badn', tonumber(open_n)}
end

redis.call('ZADD', inkey, now + lease, id)
local count = redis.call('ZCARD', inkey)
local keep = open_expiry(ttl, lease)
redis.call('HSET', nonces, id, nonce .. ' ' .. gen .. ' ' .. count)
redis.call('EXPIRE', nonces, keep)

if count >= n then
  -- The one place a round passes.
  redis.call('RPUSH', outkey, 'ok')
  redis.call('EXPIRE', outkey, linger)
  redis.call('EXPIRE', inkey, linger)
  redis.call('HSET', base, 'gen', gen + 1)
  redis.call('HDEL', base, 'n')
  redis.call('EXPIRE', base, ttl)
  return {'done', gen, count, n}
end

-- The round's first arrival fixes n and the expiries; later arrivals of the
-- same round find them set, and the waiters' heartbeats keep them alive.
if count == 1 then
  redis.call('HSET', base, 'gen', gen, 'n', n)
  redis.call('EXPIRE', base, keep)
  redis.call('EXPIRE', inkey, keep)
end
return {'wait', gen, count, n}
