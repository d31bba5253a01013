-- Ending a round, shared by every script that can end one (needs keys.lua).

-- How long the keys of an open round live: the idle ttl, but never less
-- than two leases, so that while any party waits (renewing every third of
-- its lease) nothing of the open round expires under it.
local function open_expiry(ttl, lease_ms)
  return math.max(ttl, math.ceil(2 * lease_ms / 1000) + 1)
end

-- Break round gen: push 'broken <reason>' (never anything else, so no
-- caller can release waiters with 'ok' through here), let the round's keys
-- linger, and move the barrier past the round if it is still the open one.
-- Returns the outcome pushed.
-- The round's keys besides in and out, all derived, possibly absent:
-- 'val' (the --value list, in arrival order) and 'run' (the id of the
-- party running the --once command).
local function linger_round(base, gen, inkey, outkey, linger)
  redis.call('EXPIRE', outkey, linger)
  redis.call('EXPIRE', inkey, linger)
  redis.call('EXPIRE', round_key(base, gen, 'val'), linger)
  redis.call('EXPIRE', round_key(base, gen, 'run'), linger)
end

local function break_round(base, gen, inkey, outkey, reason, linger)
  local outcome = 'broken ' .. reason
  redis.call('RPUSH', outkey, outcome)
  linger_round(base, gen, inkey, outkey, linger)
  if tonumber(redis.call('HGET', base, 'gen') or '0') == gen then
    redis.call('HSET', base, 'gen', gen + 1)
    redis.call('HDEL', base, 'n', 'expect', 'reduce')
  end
  return outcome
end
