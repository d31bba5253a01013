-- lock-release: a holder gives its slot back, or a waiter leaves the
-- queue (its timeout, a signal); the freed slot goes to the queue's head.
--
-- Atomic because the release and the grant to the next waiter must be one
-- step: no acquire may see the slot free in between and jump the queue.
--
-- KEYS[1]  the lock's base key, rb:l:{NAME} (derived keys: includes/lock.lua)
-- KEYS[2]  the keeper of the name's slot (includes/keeper.lua)
-- ARGV[1]  id of the caller
-- ARGV[2]  nonce of its acquire
-- ARGV[3]  ttl of idle state in seconds (integer >= 1)
--
-- Returns one of
--   {'released', token}  the caller held the slot granted with token (a
--                        waiter granted just before it gave up, too)
--   {'left'}             the caller was waiting; it left the queue
--   {'none'}             the caller neither held nor waited (a second
--                        release, an expired lease, a reset); nothing
--                        written, but for a holder a reset revoked: its
--                        release confirms its command stopped, which may
--                        end the reset's quarantine
-- A bad argument is an error reply, and nothing is written.

--- @include "includes/args.lua"
--- @include "includes/time.lua"
--- @include "includes/keys.lua"
--- @include "includes/lock.lua"

local base = KEYS[1]
local id = word_arg(1, 'id', false)
local nonce = word_arg(2, 'nonce', false)
local ttl = int_arg(3, 'ttl', 1, 1e9)
local holders, queue = lock_key(base, 'holders'), lock_key(base, 'queue')

local st = lock_state(base, id)
local had, _, token = lock_parse(base, id, st.entry)
local w = {}
if had ~= nonce then
  if not st.rq or
     redis.call('ZREM', lock_key(base, 'revoked'), nonce) == 0 then
    return {'none'}
  end
else
  -- The entry is blanked, not deleted: the one HSET that grants the slot
  -- on ends it too.
  w['i:' .. id] = ''
end
local res
if had ~= nonce then
  res = {'none'}
elseif redis.call('ZREM', holders, id) == 1 then
  res = {'released', token}
  if redis.call('ZCARD', holders) == 0 then keeper_free(base) end
  history_lock(base, 'release', id, token, ttl)
else
  redis.call('ZREM', queue, id)
  redis.call('ZREM', lock_key(base, 'wait'), id)
  res = {'left'}
end
-- Nobody in line: nobody to grant to, and a dead holder's entry is
-- dropped by the next acquire that finds it.
local head = redis.call('ZRANGE', queue, 0, 0)[1]
if head then
  local now = now_ms()
  local dl = lock_expire(base, now, st.dl, w, ttl)
  if not lock_quarantine(base, st, now, w) then
    lock_grant(base, tonumber(st.max or '1') or 1, now, ttl, nil, nil, w,
               dl, head, st.sh)
  end
  local touch = lock_due(st, now, ttl, w)
  lock_write(base, w)
  if touch then lock_refresh(base, ttl) end
else
  if st.rq then lock_quarantine(base, st, now_ms(), w) end
  lock_write(base, w)
end
return res
