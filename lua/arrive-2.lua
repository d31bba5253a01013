-- arrive: register one party in the open round of a barrier.
--
-- Atomic because the count check, the lease entry and the round's end must
-- be one step: two parties completing the same round at once would
-- otherwise both push an outcome, or neither.
--
-- KEYS[1]  barrier base key, rb:{NAME} (hash: gen, n). The round's keys
--          (rb:{NAME}:<gen>:in, :out, :val, :run) are derived from it, as
--          the caller cannot know gen before this script reads it.
-- KEYS[2]  the barrier's nonce hash, rb:{NAME}:nonce
-- ARGV[1]  party id (1..200 bytes, no whitespace, braces or commas)
-- ARGV[2]  nonce of this wait call (no whitespace)
-- ARGV[3]  n, the party count the caller expects (integer 1..100000)
-- ARGV[4]  lease in milliseconds (integer >= 1)
-- ARGV[5]  ttl of idle state in seconds (integer >= 1)
-- ARGV[6]  linger of ended rounds in seconds (integer >= 1)
-- ARGV[7]  '1' when the caller has a --once command: if its arrival
--          completes the round, the round is left open for it to run
--          (the release script passes it after); '0' otherwise
-- ARGV[8]  optional: this party's --value (1..200 bytes, no control
--          characters), appended to the round's value list
--
-- Returns one of
--   {'wait', gen, count, n, index, dup}  arrived; block on the out list
--   {'done', gen, count, n, index, dup}  this arrival completed the round
--                                        ('ok' pushed)
--   {'run', gen, count, n, index, dup}   this arrival completed the round
--                                        and must run its --once command,
--                                        then call release (or abandon)
--   {'badn', open_n}                     the open round was fixed at
--                                        another n; nothing was written
-- index is the arrival's place in its round (0 first); dup is 1 when the
-- id was already in the round under another nonce (a restarted party, or
-- two processes sharing an id: it still counts once).
-- A bad argument is an error reply, and nothing is written.
-- A retried call with the same (id, nonce) gets its first answer back: the
-- same gen, count and index, 'done'/'run' if that arrival completed the
-- round, else 'wait' (on that gen, whose out list may already hold the
-- outcome). So a lost reply never counts an arrival twice, never moves it
-- to a later round, never runs a --once command twice, and the party that
-- completed a round still knows it did. The nonces hash keeps
-- '<nonce> <gen> <count>' per id.

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
local once = ARGV[7]
if once ~= '0' and once ~= '1' then bad_arg(7, 'once') end
once = once == '1'
local value = ARGV[8]
if value ~= nil and (#value == 0 or #value > 200 or
                     string.find(value, '[%z\1-\31\127]')) then
  bad_arg(8, 'value')
end
local done = once and 'run' or 'done'

local prev = redis.call('HGET', nonces, id)
local pnonce, pgen, pcount
if prev then
  pnonce, pgen, pcount = string.match(prev, '^(%S+) (%d+) (%d+)$')
  pgen, pcount = tonumber(pgen), tonumber(pcount)
  if pnonce and pnonce == nonce then
    if pcount >= n then return {done, pgen, pcount, n, pcount - 1, 0} end
    return {'wait', pgen, pcount, n, pcount - 1, 0}
  end
end

local now = now_ms()
local state = redis.call('HMGET', base, 'gen', 'n')
if (state[1] and not string.match(state[1], '^%d+$')) or
   (state[2] and not string.match(state[2], '^%d+$')) then
  error({err = 'ERR damaged barrier state in ' .. base ..
               ' (a reset repairs it)'})
end
local gen = tonumber(state[1] or '1')
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

local keep = open_expiry(ttl, lease)
local dup = redis.call('ZADD', inkey, now + lease, id) == 0
local count = redis.call('ZCARD', inkey)
local index = count - 1
if dup then
  -- Same member, same place: keep the first arrival's count and index.
  if pgen == gen and pcount then index = pcount - 1 end
  redis.call('HSET', nonces, id, nonce .. ' ' .. gen .. ' ' .. (index + 1))
else
  redis.call('HSET', nonces, id, nonce .. ' ' .. gen .. ' ' .. count)
  if value then
    local valkey = round_key(base, gen, 'val')
    redis.call('RPUSH', valkey, value)
    redis.call('EXPIRE', valkey, keep)
  end
end
redis.call('EXPIRE', nonces, keep)
dup = dup and 1 or 0

if count >= n then
  -- The round is complete. Only here (or in release, for the party this
  -- sets as runner) does a round pass.
  redis.call('HSET', base, 'gen', gen + 1)
  redis.call('HDEL', base, 'n')
  redis.call('EXPIRE', base, ttl)
  if once then
    local runkey = round_key(base, gen, 'run')
    redis.call('SET', runkey, id, 'EX', keep)
    redis.call('EXPIRE', inkey, keep)
  else
    redis.call('RPUSH', outkey, 'ok')
    linger_round(base, gen, inkey, outkey, linger)
  end
  return {done, gen, count, n, index, dup}
end

-- The round's first arrival fixes n and the expiries; later arrivals of the
-- same round find them set, and the waiters' heartbeats keep them alive.
if count == 1 then
  redis.call('HSET', base, 'gen', gen, 'n', n)
  redis.call('EXPIRE', base, keep)
  redis.call('EXPIRE', inkey, keep)
end
return {'wait', gen, count, n, index, dup}
