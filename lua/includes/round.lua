-- Ending a round, shared by every script that can break one.

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
local function break_round(base, gen, inkey, outkey, reason, linger)
  local outcome = 'broken ' .. reason
  redis.call('RPUSH', outkey, outcome)
  redis.call('EXPIRE', outkey, linger)
  redis.call('EXPIRE', inkey, linger)
  if tonumber(redis.call('HGET', base, 'gen') or '0') == gen then
    redis.call('HSET', base, 'gen', gen + 1)
    redis.call('HDEL', base, 'n')
  end
  return outcome
end
