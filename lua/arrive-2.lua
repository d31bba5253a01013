-- arrive: register one party in the open round of a barrier.
--
-- Atomic because the count check, the lease entry and the round's end must
-- be one step: two parties completing the same round at once would
-- otherwise both push an outcome, or neither.
--
-- KEYS[1]  barrier base key, rb:b:{NAME} (hash: gen, n, expect, reduce).
--          The round's keys (rb:b:{NAME}:<gen>:in, :out, :val, :run) are
--          derived from it, as the caller cannot know gen before this
--          script reads it.
-- KEYS[2]  the barrier's nonce hash, rb:b:{NAME}:nonce
-- KEYS[3]  optional, inside a job (the base key is then
--          rb:b:{JOB}:<epoch>:<att>:NAME): the job attempt's out list,
--          rb:j:{JOB}:<epoch>:<att>:out. When it holds 'broken <reason>'
--          the arrival is refused with {'jobbroken', outcome}
-- KEYS[4]  with KEYS[3]: the attempt's zset of its barriers' out keys,
--          rb:j:{JOB}:<epoch>:<att>:bar; the round's out key is added, so
--          the job's break (job_break) ends the round too
-- ARGV[1]  party id (1..200 bytes, no whitespace, braces or commas)
-- ARGV[2]  nonce of this wait call (no whitespace)
-- ARGV[3]  n, the party count the caller expects (integer 1..100000)
-- ARGV[4]  lease in milliseconds (integer >= 1)
-- ARGV[5]  ttl of idle state in seconds (integer >= 1)
-- ARGV[6]  linger of ended rounds in seconds (integer >= 1)
-- ARGV[7]  '1' when the caller has a --once command: if its arrival
--          completes the round, the round is left without an outcome for
--          it to run (claim, then release, pass it after); '0' otherwise
-- ARGV[8]  this party's --value (1..200 bytes, no control characters),
--          appended to the round's value list; '' for none
-- ARGV[9]  the expected ids, comma-separated (--expect); '' for none
-- ARGV[10] the --reduce op (1..20 bytes: a word); '' for none
--
-- Returns one of
--   {'wait', gen, count, n, index, dup}  arrived; block on the out list
--   {'done', gen, count, n, index, dup}  this arrival completed the round
--                                        ('ok' pushed)
--   {'run', gen, count, n, index, dup}   this arrival completed the round
--                                        and must run its --once command:
--                                        claim, run, then release (or
--                                        abandon)
--   {'badn', open_n}                     the open round was fixed at
--                                        another n; nothing was written
--   {'badexpect', open_expect}           the open round was fixed with
--                                        another --expect list ('' none),
--                                        or this id is not on it; nothing
--                                        was written
--   {'jobbroken', outcome}               the job (KEYS[3]) is broken; nothing
--                                        was written
--   {'badreduce', open_reduce}           the open round was fixed with
--                                        another --reduce op ('' none);
--                                        nothing was written
-- n, --expect and --reduce are the round's terms, fixed by its first
-- arrival: a party that disagrees never counts, so an intruder never passes
-- with the others.
-- index is the arrival's place in its round (0 first); dup is 1 when the
-- id was already in the round under another nonce (a restarted party, or
-- two processes sharing an id: it still counts once).
-- A bad argument, or a key of the wrong type, is an error reply, and
-- nothing is written.
-- A retried call with the same (id, nonce) gets its first answer back: the
-- same gen, count and index, 'done'/'run' if that arrival completed the
-- round, else 'wait' (on that gen, whose out list may already hold the
-- outcome). So a lost reply never counts an arrival twice, never moves it
-- to a later round, never runs a --once command twice, and the party that
-- completed a round still knows it did. The nonces hash keeps
-- '<nonce> <gen> <count>' per id.
--
-- A barrier hash that is gone while keys of its rounds remain (deleted by
-- hand, or expired apart) does not restart at round 1, where an old
-- round's members would count for a newcomer: the next round is numbered
-- from the server's clock instead, past any counted generation.

--- @include "includes/args.lua"
--- @include "includes/time.lua"
--- @include "includes/keys.lua"
--- @include "includes/round.lua"
--- @include "includes/types.lua"

local base, nonces = KEYS[1], KEYS[2]
if nonces ~= base .. ':nonce' then
  error({err = 'ERR KEYS[2] must be the barrier\'s nonce key'})
end
local jobout, jobbar = KEYS[3], KEYS[4]
if #KEYS ~= 2 and #KEYS ~= 4 then
  error({err = 'ERR arrive takes 2 keys, or 4 inside a job'})
end
if jobout and (string.sub(jobout, -4) ~= ':out' or
               jobbar ~= string.sub(jobout, 1, -5) .. ':bar') then
  error({err = 'ERR KEYS[3], KEYS[4] must be a job attempt\'s out and bar'})
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
if type(value) ~= 'string' or #value > 200 or
   string.find(value, '[%z\1-\31\127]') then
  bad_arg(8, 'value')
end
if value == '' then value = nil end
local expect = ARGV[9]
if type(expect) ~= 'string' or #expect > 100000 or
   string.find(expect, '[%z\1-\32\127{}]') then
  bad_arg(9, 'expected ids')
end
local reduce = ARGV[10]
if type(reduce) ~= 'string' or #reduce > 20 or
   string.find(reduce, '[^%w]') then
  bad_arg(10, 'reduce')
end
if #ARGV > 10 then bad_arg(11, 'none expected') end
want_type(base, 'hash')
want_type(nonces, 'hash')
if jobout then
  want_type(jobout, 'list')
  want_type(jobbar, 'zset')
  local jo = redis.call('LINDEX', jobout, 0)
  if jo and string.sub(jo, 1, 7) == 'broken ' then return {'jobbroken', jo} end
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
local state = redis.call('HMGET', base, 'gen', 'n', 'expect', 'reduce')
if (state[1] and not string.match(state[1], '^%d+$')) or
   (state[2] and not string.match(state[2], '^%d+$')) then
  error({err = 'ERR damaged barrier state in ' .. base ..
               ' (a reset repairs it)'})
end
local gen = tonumber(state[1] or '1')
if not state[1] and
   (redis.call('TYPE', round_key(base, 1, 'in'))['ok'] ~= 'none' or
    redis.call('TYPE', round_key(base, 1, 'out'))['ok'] ~= 'none') then
  gen = now
end
local open_n = state[2]
local inkey, outkey = round_key(base, gen, 'in'), round_key(base, gen, 'out')
want_type(inkey, 'zset')
want_type(outkey, 'list')

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
if open_n and (state[3] or '') ~= expect then
  return {'badexpect', state[3] or ''}
end
if open_n and (state[4] or '') ~= reduce then
  return {'badreduce', state[4] or ''}
end
if expect ~= '' and
   not string.find(',' .. expect .. ',', ',' .. id .. ',', 1, true) then
  return {'badexpect', expect}
end

local keep = open_expiry(ttl, lease)
if jobout then
  redis.call('ZADD', jobbar, 0, outkey)
  redis.call('EXPIRE', jobbar, keep)
end
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
  redis.call('HDEL', base, 'n', 'expect', 'reduce')
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
  if expect ~= '' then redis.call('HSET', base, 'expect', expect) end
  if reduce ~= '' then redis.call('HSET', base, 'reduce', reduce) end
  redis.call('EXPIRE', base, keep)
  redis.call('EXPIRE', inkey, keep)
end
return {'wait', gen, count, n, index, dup}
