-- reset: break the open round of a barrier with 'broken reset' and forget
-- its party count, so the next arrival starts a fresh round with any n;
-- and bring damaged state back to a usable one: any key of the barrier
-- holding the wrong type of value (a bug, or another client) is deleted
-- and named in the reply.
--
-- Atomic so that no arrival can complete the round while it is being broken.
--
-- KEYS[1]  barrier base key, rb:b:{NAME}
-- KEYS[2]  the barrier's nonce key, rb:b:{NAME}:nonce (a string marker;
--          a hash there, the previous build's, is removed)
-- ARGV[1]  linger of ended rounds in seconds (integer >= 1)
-- ARGV[2]  ttl of idle state in seconds (integer >= 1)
--
-- A round whose --once command runs (its arrivals are complete, so the
-- barrier's gen is already past it, but it has no outcome) is broken too:
-- the runner's heartbeat stops the command, and nobody passes.
--
-- Returns {gen, members, removed...}: the generation that was broken, how
-- many parties were in it (0 and 0 when the barrier was idle or unknown;
-- a --once round broken is reported when the open round was empty),
-- then the names of the keys (or 'KEY gen' for a hash field) removed as
-- damaged. After a damaged base key the barrier goes on at a generation
-- taken from the server's clock, so that no old round's keys (which
-- expire on their own) can be mistaken for the new round's.
-- A bad argument is an error reply, and nothing is written.

--- @include "includes/args.lua"
--- @include "includes/time.lua"
--- @include "includes/keys.lua"
--- @include "includes/round.lua"

local base, nonces = KEYS[1], KEYS[2]
if nonces ~= base .. ':nonce' then
  error({err = 'ERR KEYS[2] must be the barrier\'s nonce key'})
end
local linger = int_arg(1, 'linger', 1, 1e9)
local ttl = int_arg(2, 'ttl', 1, 1e9)

local removed = {}
-- Delete key unless it is absent or of the type the protocol gives it.
local function repair(key, want)
  local t = redis.call('TYPE', key)['ok']
  if t ~= 'none' and t ~= want then
    redis.call('DEL', key)
    removed[#removed + 1] = key
    return true
  end
  return false
end

local fresh = repair(base, 'hash')
-- A hash there is the previous build's, whose parties must not meet this
-- build's: reset removes it.
repair(nonces, 'string')
local gen = redis.call('HGET', base, 'gen')
if gen and not string.match(gen, '^%d+$') then
  redis.call('HDEL', base, 'gen', 'n')
  removed[#removed + 1] = base .. ' gen'
  gen, fresh = nil, true
end
local n = redis.call('HGET', base, 'n')
if n and not string.match(n, '^%d+$') then
  redis.call('HDEL', base, 'n')
  removed[#removed + 1] = base .. ' n'
end
-- The open round's fields arrive keeps beside n (includes/round.lua): one
-- that is not a number (written by hand) is damage a reset repairs too.
local extra = {'c', 'dl', 'ex', 'bx'}
local vals = redis.call('HMGET', base, unpack(extra))
for i, f in ipairs(extra) do
  if vals[i] and not string.match(vals[i], '^%d+$') then
    redis.call('HDEL', base, f)
    removed[#removed + 1] = base .. ' ' .. f
  end
end
gen = tonumber(gen or '0')

local members = 0
local res_gen
if gen > 0 then
  local inkey = round_key(base, gen, 'in')
  local outkey = round_key(base, gen, 'out')
  repair(inkey, 'zset')
  repair(outkey, 'list')
  repair(round_key(base, gen, 'val'), 'list')
  repair(round_key(base, gen, 'run'), 'string')
  if gen > 1 then repair(round_key(base, gen - 1, 'out'), 'list') end
  members = redis.call('ZCARD', inkey)
  if gen > 1 and
     redis.call('TYPE', round_key(base, gen - 1, 'run'))['ok'] ~= 'none' then
    local pin = round_key(base, gen - 1, 'in')
    local pout = round_key(base, gen - 1, 'out')
    repair(pin, 'zset')
    if not redis.call('LINDEX', pout, 0) then
      break_round(base, gen - 1, pin, pout, 'reset', linger)
      if members == 0 then
        members = redis.call('ZCARD', pin)
        res_gen = gen - 1
      end
    end
  end
  if not redis.call('LINDEX', outkey, 0) then
    break_round(base, gen, inkey, outkey, 'reset', linger)
  else
    redis.call('EXPIRE', inkey, linger)
    redis.call('HSET', base, 'gen', gen + 1)
    redis.call('HDEL', base, unpack(OPEN_FIELDS))
  end
  redis.call('EXPIRE', base, ttl)
  -- bx said when the hash expired; now that it is sooner, the next arrival
  -- must renew it (a round must not lose its hash to a reset's short ttl).
  redis.call('HDEL', base, 'bx')
elseif fresh then
  redis.call('HSET', base, 'gen', now_ms())
  redis.call('EXPIRE', base, ttl)
end
local res = {res_gen or gen, members}
for _, k in ipairs(removed) do res[#res + 1] = k end
return res
