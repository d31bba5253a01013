-- lock-acquire: take a place in a lock's queue, or keep it; expire dead
-- holders and waiters and grant free slots to the queue's head.
--
-- Atomic because "who holds, who is next, is a slot free" and the grant
-- (token, holder entry, wake-up) must not interleave with another
-- acquire, a release or a reset of the same lock.
--
-- KEYS[1]  the lock's base key, rb:l:{NAME}; every other key of the lock
--          is derived from it under the same {NAME} tag (includes/lock.lua
--          lists them), so the script touches one cluster slot
-- ARGV[1]  id of the caller (a word, no comma)
-- ARGV[2]  nonce of this acquire (a word; the same on every call of one
--          acquire, resends included)
-- ARGV[3]  max: slots of the lock (integer 1..100000)
-- ARGV[4]  lease in milliseconds (integer >= 1), for the waiter's entry
--          now and the holder's entry once granted
-- ARGV[5]  ttl of idle state in seconds (integer >= 1)
-- ARGV[6]  '1' on an acquire's first call, '0' on the later ones (after a
--          blocking slice): a later call whose entry is gone is 'lost',
--          never queued again at the back
-- KEYS[2]  the keeper of the name's slot, <prefix>:k:{T}
--          (includes/keeper.lua): read and written on a first call, its
--          record of the name's holders on every grant
-- ARGV[7]  's' for a shared (read) request, 'x' (or absent) for an
--          exclusive one; a shared request needs max 1 (a read-write lock
--          is a mutex that lets readers in together)
-- ARGV[8]  after a 'keeper' reply: '<k> <found>', the client loaded the
--          marker of class k and found markers up to class found (-1:
--          none); else '' (or absent)
--
-- Returns one of
--   {'held', token}           the caller holds a slot (granted now, or
--                             earlier and not yet seen: a woken waiter or
--                             a resent call); either way its lease runs
--                             lease ms from now
--   {'wait', next_ms}         queued; block on the caller's wake list
--                             rb:l:{NAME}:wake:<id> (BLMOVE wake wake
--                             LEFT LEFT: the element stays) for at most
--                             min(lease/3, next_ms + a tick): next_ms is
--                             the time to the holders' earliest lease
--                             deadline (-1: no holder), or when that is
--                             a third of the lease or more away, possibly
--                             less but still that much
--   {'badmax', max}           the lock is in use with another max (a
--                             shared request says max 1); nothing
--                             written
--   {'busy', left_ms}         the id holds or waits under another nonce
--                             (two processes with one id), whose lease
--                             has left_ms to run; nothing written
--   {'lost'}                  a later call found no entry: the waiter's
--                             lease ran out, or the lock was reset
--   {'gone'}                  a later call found no entry and no fencing
--                             counter: the lock's state was lost
--   {'keeper', k, why}        a first call: the keeper does not cover a
--                             lease of class k yet ('class'), or is gone
--                             ('missing'): load the marker (and, when
--                             missing, look for markers) and call again
--                             with ARGV[8]; nothing written
-- After a loss of state (includes/keeper.lua) a new request waits until
-- no old holder can still run: it is told 'wait' until then.
-- A bad argument is an error reply, and nothing is written.

--- @include "includes/args.lua"
--- @include "includes/time.lua"
--- @include "includes/keys.lua"
--- @include "includes/lock.lua"

local base = KEYS[1]
local id = word_arg(1, 'id', false)
local nonce = word_arg(2, 'nonce', false)
local max = int_arg(3, 'max', 1, 100000)
local lease = int_arg(4, 'lease ms', 1, 1e12)
local ttl = int_arg(5, 'ttl', 1, 1e9)
local first = int_arg(6, 'first', 0, 1) == 1
local shared = ARGV[7] == 's'
if ARGV[7] and ARGV[7] ~= 's' and ARGV[7] ~= 'x' then bad_arg(7, 'mode') end
if shared and max ~= 1 then bad_arg(3, 'max of a shared request') end
local holders, queue = lock_key(base, 'holders'), lock_key(base, 'queue')
local wait = lock_key(base, 'wait')
local mykey = 'i:' .. id
local now = now_ms()

-- A waiter's renewal between slices, while nothing changed: its entry is
-- still in line (ZADD XX counts it) and no holder's lease has run out. Two
-- commands, as this is the cost of waiting, paid by every waiter every
-- slice; anything else takes the full path below. The earliest holder
-- deadline read here, not dl, ends the next slice: dl stays behind the
-- holders' renewals, and every waiter would wake for it.
if not first and redis.call('ZADD', wait, 'XX', 'CH', now + lease, id) == 1
then
  local earliest = redis.call('ZRANGE', holders, 0, 0, 'WITHSCORES')[2]
  if earliest and tonumber(earliest) >= now then
    return {'wait', tonumber(earliest) - now}
  end
end

-- The keeper: a slot whose state was lost waits; the record of the
-- name's holders is read where every grant path reads it
-- (lock_quarantine).
local lq
if first then
  local marked = ARGV[8]
  if marked == '' then marked = nil end
  local ok, till, why = keeper_check(base, lease, now, false, marked)
  if not ok then return {'keeper', till, why} end
  lq = till
end

local st = lock_state(base, id)
local w = {}
local dl, gone = lock_expire(base, now, st.dl, w, ttl)
local entry = st.entry
if gone[id] then entry = nil end
local had, _, token = lock_parse(base, id, entry)
if had and had ~= nonce then
  -- How long the other process' lease has left: alive, it renews before
  -- then; the caller may wait that long to tell.
  local d = redis.call('ZSCORE', holders, id) or redis.call('ZSCORE', wait, id)
  return {'busy', d and math.max(0, tonumber(d) - now) or 0}
end
local touch = lock_due(st, now, ttl, w)
local quarantined
local function quarantine()
  if quarantined == nil then
    quarantined = lock_quarantine(base, st, now, w) or false
  end
  return quarantined
end
local function done(reply)
  lock_write(base, w)
  if touch then lock_refresh(base, ttl) end
  return reply
end
if had and redis.call('ZSCORE', holders, id) then
  -- Granted earlier (a grant read late, or not read: a slice ended or
  -- failed just before it, a stale element was dropped). The caller counts
  -- its lease from the sending of this call; left at the grant's deadline,
  -- the server would expire it sooner and grant its slot to another while
  -- the caller still believes it holds.
  redis.call('ZADD', holders, now + lease, id)
  keeper_hold(base, now + lease)
  redis.call('DEL', lock_key(base, 'wake:' .. id))
  return done({'held', token})
end
local cur, held
if had then
  redis.call('ZADD', wait, now + lease, id)
  cur = tonumber(st.max or tostring(max))
elseif not first then
  if not redis.call('GET', lock_key(base, 'token')) then
    return {'gone'}
  end
  return done({'lost'})
else
  held = redis.call('ZCARD', holders)
  local nqueue = redis.call('ZCARD', queue)
  cur = tonumber(st.max or '0') or 0
  if held + nqueue > 0 and cur ~= max then return {'badmax', cur} end
  if cur ~= max then
    w.max = max
    cur = max
  end
  dl = lock_lower(w, dl, now + lease)
  if lq and (not st.lq or lq > st.lq) then
    st.lq = lq
    w.lq = string.format('%.0f', lq)
  end
  if nqueue == 0 and not quarantine() and
     lock_fits(max, held, shared, st.sh) then
    -- It fits and nobody is in line: granted without queueing.
    token = lock_next_token(base, ttl)
    w.sh = shared and '1' or '0'
    history_lock(base, 'grant', id, token, ttl)
    redis.call('ZADD', holders, now + lease, id)
    keeper_hold(base, now + lease)
    w[mykey] = lock_fmt(nonce, lease, token, now, shared)
    if held == 0 then lock_created(base, 'holders', ttl) end
    return done({'held', token})
  end
  local ticket = (tonumber(st.seq or '0') or 0) + 1
  w.seq = ticket
  redis.call('ZADD', queue, ticket, id)
  history_lock(base, 'queue', id, nil, ttl)
  redis.call('ZADD', wait, now + lease, id)
  w[mykey] = lock_fmt(nonce, lease, 0, 0, shared)
  redis.call('DEL', lock_key(base, 'wake:' .. id))
  if nqueue == 0 then
    lock_created(base, 'queue', ttl)
    lock_created(base, 'wait', ttl)
  end
end

local q = quarantine()
local mine = not q and lock_grant(base, cur, now, ttl, id, held, w, dl, nil,
                                  st.sh)
if mine then return done({'held', mine}) end
-- dl is never later than the holders' earliest lease deadline, so a slice
-- that ends just after it finds a dead holder's slot at once; only when it
-- would end the slice sooner than a third of the lease (the client's
-- slice) is the earliest deadline itself read, as dl may lag.
local next_ms = (w.dl or dl) - now
if next_ms < lease / 3 then
  local earliest = redis.call('ZRANGE', holders, 0, 0, 'WITHSCORES')[2]
  next_ms = earliest and math.max(0, tonumber(earliest) - now) or -1
end
-- After a reset the slice also ends when the quarantine does.
if q and (next_ms < 0 or q - now < next_ms) then next_ms = q - now end
return done({'wait', next_ms})
