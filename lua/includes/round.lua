-- Ending a round, shared by every script that can end one (needs keys.lua).

--- @include "includes/history.lua"

-- How long the keys of an open round live: the idle ttl, but never less
-- than two leases, so that while any party waits (renewing every third of
-- its lease) nothing of the open round expires under it.
local function open_expiry(ttl, lease_ms)
  return math.max(ttl, math.ceil(2 * lease_ms / 1000) + 1)
end

-- The barrier hash's fields that belong to its open round, dropped when
-- the barrier moves past it. c (members counted) above 0 is what says a
-- round is open: n, expect and reduce count only then. dl is a lower bound
-- of the open round's lease deadlines (ms), ex when its in key expires, v
-- the round that has a value list. Nothing in the hash is per party, so
-- it holds a fixed number of fields however many ids a name has seen.
local OPEN_FIELDS = {'n', 'expect', 'reduce', 'c', 'dl', 'ex', 'v'}

-- rb:b:{NAME}:i:<id>, a string: '<nonce> <gen> <count>', the id's last
-- arrival, which a resent arrival and withdraw find by its nonce. Both
-- come within the arrival call's resend window (a lease, or 30 s with
-- --replicas: lib/rb_barrier.c resend_until) and the 2 s after it that
-- withdraw has; so the record lives a minute (or two leases) after the
-- arrival, and ids that do not come back leave by themselves; never
-- longer than keep, the round's own expiry (--ttl is for every key: the
-- hash that held these records before expired then too). Dropping
-- the records of a round when it ends would not do (nor scale): a resend
-- after its round passed would then count again in the next (the model's
-- MUT_RECORD_PRUNED).
local function record_key(base, id)
  return base .. ':i:' .. id
end
local function record_expiry(lease_ms, keep)
  return math.min(keep, math.max(60, math.ceil(2 * lease_ms / 1000) + 1))
end

-- The barrier hash lives ttl (keep, while a round is open) past its last
-- use. Renewing that on every arrival would cost a command each; it is
-- renewed once it has run down by a tenth (at most a minute), and the
-- moment it expires is kept in field bx. Returns the new bx when the
-- caller must renew it (EXPIRE keep, once the hash exists), else nil.
local function base_expiry(now, bx, keep)
  local slack = math.min(60, math.floor(keep / 10))
  if bx and bx >= now + (keep - slack) * 1000 then return nil end
  return now + keep * 1000
end

-- rb:b:{NAME}:nonce, where the previous build kept each party's last
-- arrival in a hash, holds this string while the barrier hash lives. That
-- build's scripts refuse a string there (WRONGTYPE naming the key) instead
-- of meeting this build's parties with arrivals that keep neither c nor
-- dl. Set wherever the hash's expiry is, so it costs no command per round.
local NONCE_MARK = 'each party\'s last arrival is kept in the barrier hash'
local function mark_nonces(nonces, keep)
  redis.call('SET', nonces, NONCE_MARK, 'EX', keep)
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
  history_break(base, gen, reason)
  linger_round(base, gen, inkey, outkey, linger)
  if tonumber(redis.call('HGET', base, 'gen') or '0') == gen then
    redis.call('HSET', base, 'gen', gen + 1)
    redis.call('HDEL', base, unpack(OPEN_FIELDS))
  end
  return outcome
end
