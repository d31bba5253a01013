-- What every lock script shares (needs keys.lua): the entries, expiry of
-- dead holders and waiters, and granting free slots to the queue's head.
--
--- @include "includes/history.lua"
--
-- Keys under the base key rb:l:{NAME} (all derived by lock_key):
--   rb:l:{NAME}           hash: max (slots, fixed while anyone holds or
--                         waits), seq (last queue ticket), exp (when the
--                         expiries were last pushed out, ms), dl (a lower
--                         bound of every holder's and waiter's lease
--                         deadline, ms), and i:<id> per holder or waiter,
--                         "<nonce> <lease ms> <token> <since>" (token and
--                         since are 0 while waiting; '' once released)
--   ...:token             string: the fencing counter, INCRBY 1 per grant;
--                         never deleted by a reset, longest expiry
--   ...:holders           zset: id -> lease deadline (ms, server TIME)
--   ...:queue             zset: id -> ticket (first come, first served)
--   ...:wait              zset: id -> a waiter's lease deadline
--   ...:wake:<id>         list: "<nonce> <token>" pushed by the grant,
--                         "reset" by a reset; the waiter blocks on it with
--                         a rotating BLMOVE (the element stays until the
--                         next acquire or its expiry)
--
-- The state a call needs (those fields and the caller's own entry) is
-- read in one HMGET of the base hash and written in one HSET.
local function lock_state(base, id)
  local st = redis.call('HMGET', base, 'max', 'seq', 'exp', 'dl', 'i:' .. id)
  return {max = st[1], seq = st[2], exp = tonumber(st[3] or '0') or 0,
          dl = tonumber(st[4] or ''), entry = st[5]}
end

local function lock_parse(base, id, v)
  if not v or v == '' then return nil end
  local nonce, lease, token, since =
    string.match(v, '^(%S+) (%d+) (%d+) (%d+)$')
  if not nonce then
    error({err = 'ERR damaged lock entry of ' .. id .. ' in ' .. base})
  end
  return nonce, tonumber(lease), tonumber(token), tonumber(since)
end

local function lock_entry(base, id)
  return lock_parse(base, id, redis.call('HGET', base, 'i:' .. id))
end

-- Drop holders and waiters whose lease deadline has passed: a dead holder
-- frees its slot, a dead waiter leaves the queue. dl, kept at or below
-- every entry's deadline (each new deadline lowers it, a renewal only
-- raises an entry's), says in one compare that nobody can have expired:
-- only once it has passed are the zsets scanned and dl set to their
-- earliest deadline (ttl, s: the idle ttl). w (the pending HSET of the
-- base hash) gets the new dl; returns it and the set of ids dropped.
local function lock_expire(base, now, dl, w, ttl)
  if dl and dl >= now then return dl, {} end
  local holders, queue = lock_key(base, 'holders'), lock_key(base, 'queue')
  local wait = lock_key(base, 'wait')
  local edge = '(' .. now
  local gone, dead = {}, {}
  for _, id in ipairs(redis.call('ZRANGEBYSCORE', holders, '-inf', edge)) do
    redis.call('ZREM', holders, id)
    history_lock(base, 'expire', id, nil, ttl)
    gone[id] = true
    dead[#dead + 1] = 'i:' .. id
  end
  for _, id in ipairs(redis.call('ZRANGEBYSCORE', wait, '-inf', edge)) do
    redis.call('ZREM', wait, id)
    redis.call('ZREM', queue, id)
    gone[id] = true
    dead[#dead + 1] = 'i:' .. id
  end
  if #dead > 0 then redis.call('HDEL', base, unpack(dead)) end
  -- With no entry left any value bounds them all, as each later entry
  -- lowers it: one far ahead spares the next calls a scan.
  dl = now + ttl * 1000
  local h = redis.call('ZRANGE', holders, 0, 0, 'WITHSCORES')[2]
  local q = redis.call('ZRANGE', wait, 0, 0, 'WITHSCORES')[2]
  if h then dl = tonumber(h) end
  if q and (not h or tonumber(q) < dl) then dl = tonumber(q) end
  w.dl = dl
  return dl, gone
end

-- A new deadline lowers dl.
local function lock_lower(w, dl, deadline)
  if not dl or deadline < dl then
    w.dl = deadline
    return deadline
  end
  return dl
end

-- Every key's expiry (the token's much longer), at most every quarter of
-- the ttl, so that neither a renewal nor a hand-off pays for EXPIREs: a
-- key a script may just have created gets its expiry from the script
-- (lock_created), the rest keep theirs until the next refresh here. A
-- lock whose base hash is gone (new, or expired) is refreshed at once.
-- Returns whether to refresh; w gets the new exp, lock_refresh runs the
-- EXPIREs once the base hash is written (it may not exist before).
local function lock_due(st, now, ttl, w)
  if now - st.exp < ttl * 250 then return false end
  w.exp = now
  return true
end

local function lock_refresh(base, ttl)
  redis.call('EXPIRE', base, ttl)
  for _, part in ipairs({'holders', 'queue', 'wait'}) do
    redis.call('EXPIRE', lock_key(base, part), ttl)
  end
  -- The token outlives the rest thirtyfold: if it expired, INCRBY would
  -- start again at 1 and a store guarded by the token would refuse every
  -- later holder.
  redis.call('EXPIRE', lock_key(base, 'token'), ttl * 30)
end

-- The pending writes of the base hash, in one HSET.
local function lock_write(base, w)
  local a = {}
  for k, v in pairs(w) do
    a[#a + 1] = k
    a[#a + 1] = v
  end
  if #a > 0 then redis.call('HSET', base, unpack(a)) end
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
-- create; held is the holders' count (nil: counted here); head, when
-- given, is the queue's head as the caller just read it. The grantees'
-- entries and dl go into w. Run after lock_expire with the same now.
-- Returns self's token when it was granted, else nil.
local function lock_grant(base, max, now, ttl, self, held, w, dl, head)
  local holders, queue = lock_key(base, 'holders'), lock_key(base, 'queue')
  local wait = lock_key(base, 'wait')
  held = held or redis.call('ZCARD', holders)
  local free = max - held
  local mine = nil
  while free > 0 do
    head = head or redis.call('ZRANGE', queue, 0, 0)[1]
    if not head then break end
    redis.call('ZREM', queue, head)
    redis.call('ZREM', wait, head)
    -- lock_expire has just dropped every waiter whose lease ran out, its
    -- entry with it: one still here is alive.
    local nonce, lease
    if w['i:' .. head] then
      nonce, lease = lock_parse(base, head, w['i:' .. head])
    else
      nonce, lease = lock_entry(base, head)
    end
    if nonce then
      local token = lock_next_token(base, ttl)
      history_lock(base, 'grant', head, token, ttl)
      redis.call('ZADD', holders, now + lease, head)
      if held == 0 then lock_created(base, 'holders', ttl) end
      dl = lock_lower(w, dl, now + lease)
      held = held + 1
      w['i:' .. head] = nonce .. ' ' .. lease .. ' ' .. token .. ' ' .. now
      if head == self then
        mine = token
      else
        -- The list is empty: the grantee's acquire emptied it when it
        -- joined the queue, and nothing but this grant pushes to it then.
        local wake = lock_key(base, 'wake:' .. head)
        redis.call('RPUSH', wake, nonce .. ' ' .. token)
        redis.call('EXPIRE', wake, math.ceil(2 * lease / 1000))
      end
      free = free - 1
    end
    head = nil
  end
  return mine
end
