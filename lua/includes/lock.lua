-- What every lock script shares (needs keys.lua): the entries, expiry of
-- dead holders and waiters, and granting free slots to the queue's head.
--
-- Keys under the base key rb:l:{NAME} (all derived by lock_key):
--   rb:l:{NAME}           hash: max (slots, fixed while anyone holds or
--                         waits), seq (last queue ticket), exp (when the
--                         expiries were last pushed out, ms)
--   ...:token             string: the fencing counter, INCRBY 1 per grant;
--                         never deleted by a reset, longest expiry
--   ...:holders           zset: id -> lease deadline (ms, server TIME)
--   ...:queue             zset: id -> ticket (first come, first served)
--   ...:wait              zset: id -> a waiter's lease deadline
--   ...:info              hash: id -> "<nonce> <lease ms> <token> <since>"
--                         (token and since are 0 while waiting)
--   ...:wake:<id>         list: "<nonce> <token>" pushed by the grant,
--                         "reset" by a reset; the waiter blocks on it with
--                         a rotating BLMOVE (the element stays until the
--                         next acquire, the release or its expiry)

local function lock_entry(base, id)
  local v = redis.call('HGET', lock_key(base, 'info'), id)
  if not v then return nil end
  local nonce, lease, token, since =
    string.match(v, '^(%S+) (%d+) (%d+) (%d+)$')
  if not nonce then
    error({err = 'ERR damaged lock entry of ' .. id})
  end
  return nonce, tonumber(lease), tonumber(token), tonumber(since)
end

-- Drop holders and waiters whose lease deadline has passed: a dead holder
-- frees its slot, a dead waiter leaves the queue.
local function lock_expire(base, now)
  local holders, queue = lock_key(base, 'holders'), lock_key(base, 'queue')
  local wait, info = lock_key(base, 'wait'), lock_key(base, 'info')
  local edge = '(' .. now
  local dead = redis.call('ZRANGEBYSCORE', holders, '-inf', edge)
  for _, id in ipairs(dead) do
    redis.call('ZREM', holders, id)
    redis.call('HDEL', info, id)
  end
  dead = redis.call('ZRANGEBYSCORE', wait, '-inf', edge)
  for _, id in ipairs(dead) do
    redis.call('ZREM', wait, id)
    redis.call('ZREM', queue, id)
    redis.call('HDEL', info, id)
  end
end

-- Every key's expiry (the token's much longer), at most every quarter of
-- the ttl, so that neither a renewal nor a hand-off pays for EXPIREs: a
-- key a script may just have created gets its expiry from the script
-- (lock_created), the rest keep theirs until the next refresh here. A
-- lock whose base hash is gone (new, or expired) is refreshed at once.
local function lock_touch(base, now, ttl)
  local exp = tonumber(redis.call('HGET', base, 'exp') or '0') or 0
  if now - exp < ttl * 250 then return end
  redis.call('HSET', base, 'exp', now)
  redis.call('EXPIRE', base, ttl)
  for _, part in ipairs({'holders', 'queue', 'wait', 'info'}) do
    redis.call('EXPIRE', lock_key(base, part), ttl)
  end
  -- The token outlives the rest thirtyfold: if it expired, INCRBY would
  -- start again at 1 and a store guarded by the token would refuse every
  -- later holder.
  redis.call('EXPIRE', lock_key(base, 'token'), ttl * 30)
end

-- A part that was empty (absent) before this script wrote to it has no
-- expiry yet.
local function lock_created(base, part, ttl)
  redis.call('EXPIRE', lock_key(base, part), ttl)
end

-- The next fencing token. A token key created here (the first grant, or
-- one deleted by hand) gets its long expiry at once.
local function lock_next_token(base, ttl)
  local token = redis.call('INCRBY', lock_key(base, 'token'), 1)
  if token == 1 then
    redis.call('EXPIRE', lock_key(base, 'token'), ttl * 30)
  end
  return token
end

-- Grant free slots to the queue's head, in ticket order: each grant takes
-- the next token and pushes it onto the grantee's own wake list, so a
-- release wakes exactly whom it admits. `self` (an id, or nil) is the
-- caller, told by the reply instead; ttl (s) is for the keys a grant may
-- create. Returns self's token when it was granted, else nil.
local function lock_grant(base, max, now, ttl, self)
  local holders, queue = lock_key(base, 'holders'), lock_key(base, 'queue')
  local wait, info = lock_key(base, 'wait'), lock_key(base, 'info')
  local held = redis.call('ZCARD', holders)
  local free = max - held
  local mine = nil
  while free > 0 do
    local head = redis.call('ZRANGE', queue, 0, 0)[1]
    if not head then break end
    local nonce, lease = lock_entry(base, head)
    -- A waiter that stopped renewing is dropped when its turn comes, so
    -- waiting costs no scan of the line.
    local alive = tonumber(redis.call('ZSCORE', wait, head) or '0') >= now
    redis.call('ZREM', queue, head)
    redis.call('ZREM', wait, head)
    if not alive then redis.call('HDEL', info, head) end
    if nonce and alive then
      local token = lock_next_token(base, ttl)
      redis.call('ZADD', holders, now + lease, head)
      if held == 0 then lock_created(base, 'holders', ttl) end
      held = held + 1
      redis.call('HSET', info, head,
                 nonce .. ' ' .. lease .. ' ' .. token .. ' ' .. now)
      if head == self then
        mine = token
      else
        local wake = lock_key(base, 'wake:' .. head)
        redis.call('DEL', wake)
        redis.call('RPUSH', wake, nonce .. ' ' .. token)
        redis.call('EXPIRE', wake, math.ceil(2 * lease / 1000))
      end
      free = free - 1
    end
  end
  return mine
end
