-- What every lock script shares (needs keys.lua): the entries, expiry of
-- dead holders and waiters, and granting free slots to the queue's head.
--
--- @include "includes/history.lua"
--- @include "includes/keeper.lua"
--
-- Keys under the base key rb:l:{NAME} (all derived by lock_key):
--   rb:l:{NAME}           hash: max (slots, fixed while anyone holds or
--                         waits), sh ('1': the holders, if any, hold
--                         shared; set by each grant), seq (last queue
--                         ticket), exp (when the
--                         expiries were last pushed out, ms), dl (a lower
--                         bound of every holder's and waiter's lease
--                         deadline, ms), and i:<id> per holder or waiter,
--                         "<nonce> <lease ms> <token> <since>[ s]" (token
--                         and since are 0 while waiting; " s" marks a
--                         shared request; '' once released)
--   ...:token             string: the fencing counter, one more per grant;
--                         it starts at the server's TIME in microseconds
--                         (below 2^53 until the year 2255), so a counter
--                         lost with the state (FLUSHALL) starts again
--                         above every token granted before; never deleted
--                         by a reset, longest expiry
--                         rq: after a reset, the end of the quarantine
--                         (ms): the latest lease deadline of the holders
--                         it revoked ('' once over); lq: after a loss of
--                         state (includes/keeper.lua), the end of the
--                         quarantine ('' once over)
--   ...:revoked           zset: nonce -> lease deadline of each holder a
--                         reset revoked that has not confirmed its stop
--   ...:holders           zset: id -> lease deadline (ms, server TIME);
--                         a grant pushed to a waiter has a short one
--                         (LOCK_CONFIRM_MS) until the grantee confirms it
--   ...:queue             zset: id -> ticket (first come, first served)
--   ...:wait              zset: id -> a waiter's lease deadline
--   ...:wake:<id>         list: "<nonce> <token>" pushed by the grant,
--                         "reset" by a reset, LOCK_NUDGE by a grant to
--                         another (a short deadline to watch); the waiter blocks on it with
--                         a rotating BLMOVE (the element stays until the
--                         next acquire or its expiry)
--
-- The state a call needs (those fields and the caller's own entry) is
-- read in one HMGET of the base hash and written in one HSET.
local function lock_state(base, id)
  local st = redis.call('HMGET', base, 'max', 'seq', 'exp', 'dl', 'i:' .. id,
                        'rq', 'sh', 'lq')
  return {max = st[1], seq = st[2], exp = tonumber(st[3] or '0') or 0,
          dl = tonumber(st[4] or ''), entry = st[5],
          rq = tonumber(st[6] or ''), sh = st[7] == '1',
          lq = tonumber(st[8] or '')}
end

-- After a reset, nothing is granted until every holder it revoked has
-- confirmed that its command stopped (its release) or its lease has
-- passed: a revoked holder learns of the reset only at its next renewal,
-- and its command may run until then. Returns the quarantine's end (ms)
-- while it lasts, else nil (and w ends it). One field of the base hash,
-- read with the rest, tells a lock never reset: no cost there.
-- After a loss of state, nothing is granted before lq (includes/
-- keeper.lua): an old holder may run until then and cannot confirm. The
-- holders may also go alone (an eviction takes one key at a time) while
-- waiters stay: a lock with no holders whose keeper record is still ahead
-- lost them, and every grant path passes here, so none grants before it.
-- A reset leaves the record too (its own quarantine may be lost the same
-- way); it goes once the revoked holders are done.
local function lock_quarantine(base, st, now, w)
  local lq = st.lq
  if lq and lq < now then
    w.lq = ''
    st.lq, lq = nil, nil
  end
  if st.rq then
    local revoked = lock_key(base, 'revoked')
    local last = redis.call('ZRANGE', revoked, -1, -1, 'WITHSCORES')[2]
    if last and tonumber(last) >= now then
      return math.max(tonumber(last), lq or 0)
    end
    redis.call('DEL', revoked)
    w.rq = ''
    st.rq = nil
    keeper_free(base)
    return lq
  end
  if redis.call('EXISTS', lock_key(base, 'holders')) == 0 then
    local rec = tonumber(redis.call('ZSCORE', keeper_key(base) .. ':d', base)
                        or '')
    if rec and rec >= now then
      if not lq or rec > lq then
        lq = rec
        st.lq = rec
        w.lq = string.format('%.0f', rec)
      end
    elseif rec then
      keeper_free(base)
    end
  end
  return lq
end

-- An entry's fields; the fifth result is true for a shared request.
local function lock_parse(base, id, v)
  if not v or v == '' then return nil end
  local nonce, lease, token, since, mode =
    string.match(v, '^(%S+) (%d+) (%d+) (%d+)( ?s?)$')
  if not nonce or mode == ' ' then
    error({err = 'ERR damaged lock entry of ' .. id .. ' in ' .. base})
  end
  return nonce, tonumber(lease), tonumber(token), tonumber(since),
         mode == ' s'
end

-- An entry's text. Tokens pass 10^14, where tostring (%.14g) would round
-- them: every number is written with %.0f.
local function lock_fmt(nonce, lease, token, since, shared)
  return string.format('%s %.0f %.0f %.0f%s', nonce, lease, token, since,
                       shared and ' s' or '')
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
  local gone, dead, expired = {}, {}, false
  for _, id in ipairs(redis.call('ZRANGEBYSCORE', holders, '-inf', edge)) do
    redis.call('ZREM', holders, id)
    history_lock(base, 'expire', id, nil, ttl)
    gone[id] = true
    dead[#dead + 1] = 'i:' .. id
    expired = true
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
  -- The last holder's lease passed here: its record goes. Holders that
  -- are not there without this (an eviction) leave it to lock_quarantine.
  if h then dl = tonumber(h) elseif expired then keeper_free(base) end
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

-- The next fencing token. A counter that is not there (a new name, or
-- the state lost) starts at the server's clock in microseconds, which no
-- earlier token of the name can have passed: each grant took more than a
-- microsecond. It gets its long expiry at once.
local function lock_next_token(base, ttl)
  local key = lock_key(base, 'token')
  local token = redis.call('INCRBY', key, 1)
  if token == 1 then
    local t = redis.call('TIME')
    token = tonumber(t[1]) * 1000000 + tonumber(t[2])
    redis.call('SET', key, string.format('%.0f', token), 'EX', ttl * 30)
  end
  return token
end

-- Whether a request (shared or not) can be granted beside `held` holders
-- of a lock of max slots: a shared one beside shared holders only (max is
-- 1 then: a read-write lock), an exclusive one while a slot is free. hs:
-- the holders, if any, hold shared (the base hash's sh).
local function lock_fits(max, held, shared, hs)
  if shared then return held == 0 or hs end
  return held < max
end

-- A grant pushed to a waiter (anyone but the script's caller) holds only
-- this long (or its lease, if shorter) until the grantee confirms it: the
-- woken waiter renews at once, and a grant found by its next acquire call
-- is renewed by it. A waiter killed in line so holds a free slot up this
-- long, not a whole lease; a live one, blocked on its wake list, reads
-- the grant at once.
local LOCK_CONFIRM_MS = 2000
-- Pushed onto the wake list of the queue's head after such a grant: an
-- element of another acquire's nonce (32 characters, as a client's), so a
-- waiter drops it and calls lock-acquire, whose 'wait' reply then ends
-- its next slice just after the unconfirmed grant's deadline.
local LOCK_NUDGE = string.rep('-', 32) .. ' 0'

-- Grant free slots to the queue's head, in ticket order: each grant takes
-- the next token and pushes it onto the grantee's own wake list, so a
-- release wakes exactly whom it admits. The first request that does not
-- fit ends the grants, so a shared request behind a waiting exclusive one
-- waits (no writer starves), and a run of shared ones at the head goes in
-- together. `self` (an id, or nil) is the caller, told by the reply
-- instead; ttl (s) is for the keys a grant may create; held is the
-- holders' count (nil: counted here); head, when given, is the queue's
-- head as the caller just read it; hs, st.sh. The grantees' entries, dl
-- and sh go into w. Run after lock_expire with the same now.
-- Returns self's token when it was granted, else nil.
local function lock_grant(base, max, now, ttl, self, held, w, dl, head, hs)
  local holders, queue = lock_key(base, 'holders'), lock_key(base, 'queue')
  local wait = lock_key(base, 'wait')
  held = held or redis.call('ZCARD', holders)
  local mine, pushed = nil, false
  -- Full of exclusive holders, nothing fits, whatever waits: the queue is
  -- not read (a held mutex, a grant just made).
  while held < max or hs do
    head = head or redis.call('ZRANGE', queue, 0, 0)[1]
    if not head then break end
    -- lock_expire has just dropped every waiter whose lease ran out, its
    -- entry with it: one still here is alive.
    local v = w['i:' .. head]
    if v == nil then v = redis.call('HGET', base, 'i:' .. head) end
    local nonce, lease, _, _, shared = lock_parse(base, head, v)
    if nonce and not lock_fits(max, held, shared, hs) then break end
    local upto = now + (lease or 0)
    if head ~= self and lease and lease > LOCK_CONFIRM_MS then
      upto = now + LOCK_CONFIRM_MS
    end
    redis.call('ZREM', queue, head)
    redis.call('ZREM', wait, head)
    if nonce then
      local token = lock_next_token(base, ttl)
      history_lock(base, 'grant', head, token, ttl)
      redis.call('ZADD', holders, upto, head)
      -- The grantee may run a full lease from its confirmation.
      keeper_hold(base, now + lease)
      if held == 0 then lock_created(base, 'holders', ttl) end
      dl = lock_lower(w, dl, upto)
      held = held + 1
      hs = shared
      w.sh = shared and '1' or '0'
      w['i:' .. head] = lock_fmt(nonce, lease, token, now, shared)
      if head == self then
        mine = token
      else
        -- The list is empty, or holds a nudge: the grantee's acquire
        -- emptied it when it joined the queue. A nudge read first makes
        -- the waiter delete the list, grant and all, and call
        -- lock-acquire, which finds the grant ('held').
        local wake = lock_key(base, 'wake:' .. head)
        redis.call('RPUSH', wake, string.format('%s %.0f', nonce, token))
        redis.call('EXPIRE', wake, math.ceil(2 * lease / 1000))
        pushed = true
      end
    end
    head = nil
  end
  -- The next in line (not the caller, whose reply says it) may be blocked
  -- for a third of its lease: if a grantee is dead, the slot passes on
  -- only once someone runs a script after the short deadline.
  if pushed then
    local next_id = redis.call('ZRANGE', queue, 0, 0)[1]
    if next_id and next_id ~= self then
      local wake = lock_key(base, 'wake:' .. next_id)
      redis.call('RPUSH', wake, LOCK_NUDGE)
      -- Of no use after the deadline it points at: it may expire then.
      redis.call('EXPIRE', wake, math.ceil(2 * LOCK_CONFIRM_MS / 1000))
    end
  end
  return mine
end
