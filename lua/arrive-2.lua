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
-- KEYS[2]  the barrier's nonce key, rb:b:{NAME}:nonce: never read (each
--          party's last arrival is kept in its own key); set to a
--          string with the hash's expiry, which the previous build's
--          scripts refuse (see mark_nonces in includes/round.lua)
-- KEYS[3]  optional, inside a job (the base key is then
--          rb:b:{JOB}:<epoch>:<att>:NAME): the job attempt's out list,
--          rb:j:{JOB}:<epoch>:<att>:out. When it holds 'broken <reason>',
--          or 'stopping <reason>' and the attempt's :left is not empty (a
--          member departed the stopping job), the arrival is refused with
--          {'jobbroken', outcome}
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
-- ARGV[9]  the digest (40 lowercase hex digits) of the expected ids
--          (--expect); '' for none. See includes/expect.lua
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
--                                        another --expect list (its digest;
--                                        '' none), or this id is not on
--                                        it; nothing was written
--   {'needlist'}                         the list of ARGV[9]'s digest is
--                                        not stored: store it (expect-store)
--                                        and call again; nothing was
--                                        written
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
-- completed a round still knows it did. Each id's last arrival,
-- '<nonce> <gen> <count>', is kept in its own key (record_key in
-- includes/round.lua) that expires a minute or two leases after it, so
-- that ids of ended rounds leave without a scan.
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
--- @include "includes/expect.lua"

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
local expect = digest_arg(9)
local reduce = ARGV[10]
if type(reduce) ~= 'string' or #reduce > 20 or
   string.find(reduce, '[^%w]') then
  bad_arg(10, 'reduce')
end
if #ARGV > 10 then bad_arg(11, 'none expected') end
if jobout then
  want_type(jobout, 'list')
  want_type(jobbar, 'zset')
  local jo = redis.call('LINDEX', jobout, 0)
  if jo and string.sub(jo, 1, 7) == 'broken ' then return {'jobbroken', jo} end
  -- A stopping job's rounds keep passing while every member is there; once
  -- one has departed (includes/job.lua's job_depart) none can.
  if jo and string.sub(jo, 1, 9) == 'stopping ' then
    local gone = redis.call('ZRANGE', string.sub(jobout, 1, -5) .. ':left', 0, 0)[1]
    if gone then
      return {'jobbroken', 'broken ' .. gone .. ' left the stopping job'}
    end
  end
end
local done = once and 'run' or 'done'

-- One read for the round's state (see OPEN_FIELDS in includes/round.lua),
-- one for this party's last arrival (record_key).
local slot = record_key(base, id)
local state = typed(base, 'hash', 'HMGET', base, 'gen', 'n', 'expect',
                    'reduce', 'c', 'dl', 'bx', 'v')
local prev = typed(slot, 'string', 'GET', slot)
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
for i = 1, 7 do
  if i ~= 3 and i ~= 4 and state[i] and
     not string.match(state[i], '^%d+$') then
    error({err = 'ERR damaged barrier state in ' .. base ..
                 ' (a reset repairs it)'})
  end
end
local gen = tonumber(state[1] or '1')
if not state[1] and
   (redis.call('TYPE', round_key(base, 1, 'in'))['ok'] ~= 'none' or
    redis.call('TYPE', round_key(base, 1, 'out'))['ok'] ~= 'none') then
  gen = now
end
local counted = tonumber(state[5] or '0')
local open_n = counted > 0 and state[2] or nil
local inkey, outkey = round_key(base, gen, 'in'), round_key(base, gen, 'out')
local deadline = now + lease
-- dl, the earliest lease deadline the round can hold, decides in one
-- compare that no member's lease has run out; only when it has passed
-- are the round's earliest members read, and dl set to their deadline.
local dl = deadline
if open_n then
  local earliest = tonumber(state[6] or '0')
  if earliest < now then
    local first = typed(inkey, 'zset', 'ZRANGE', inkey, 0, 1, 'WITHSCORES')
    local other, score = first[1], tonumber(first[2])
    if other == id then other, score = first[3], tonumber(first[4]) end
    if other and score < now then
      -- A round whose member let its lease run out is dead: nobody will
      -- complete it. Break it for anyone still blocked on it, then join a
      -- fresh round.
      want_type(outkey, 'list')
      break_round(base, gen, inkey, outkey,
                  'lease of ' .. other .. ' expired', linger)
      gen = gen + 1
      open_n, counted = nil, 0
      inkey, outkey = round_key(base, gen, 'in'), round_key(base, gen, 'out')
    elseif other then
      dl = math.min(score, deadline)
    end
  else
    dl = math.min(earliest, deadline)
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
-- This id must be on the list: one lookup in the stored set.
local xkey = expect ~= '' and expect_key(base, expect) or nil
if xkey and typed(xkey, 'set', 'SISMEMBER', xkey, id) == 0 then
  if redis.call('EXISTS', xkey) == 0 then return {'needlist'} end
  return {'badexpect', expect}
end

local keep = open_expiry(ttl, lease)
local valkey, runkey = round_key(base, gen, 'val'), round_key(base, gen, 'run')
-- The writes below that could meet a key of another type are checked
-- before the first of them (SET would overwrite one).
if value then want_type(valkey, 'list') end
if once and counted + 1 >= n then want_type(runkey, 'string') end
local dup = typed(inkey, 'zset', 'ZADD', inkey, deadline, id) == 0
local count, index
-- The in key must agree with c wherever it is read: members c does not
-- count were left by a run the barrier no longer knows (its hash expired
-- or was deleted before the round's in key, whose dead members would
-- otherwise count), or written by hand. Such a round is broken as lost,
-- never passed.
local members
if dup then
  -- Same member, same place: keep the first arrival's count and index.
  members = redis.call('ZCARD', inkey)
  count = counted
  index = count - 1
  if pgen == gen and pcount then index = pcount - 1 end
else
  count = counted + 1
  index = count - 1
  if count >= n then members = redis.call('ZCARD', inkey) end
end
if members and members ~= count then
  want_type(outkey, 'list')
  break_round(base, gen, inkey, outkey, 'state of round ' .. gen ..
              ' lost: its members are not the ' .. count ..
              ' the barrier counted', linger)
  -- Kept as this arrival's answer (a count below n: a retry waits on the
  -- broken round too, never takes it for passed). A hash that was gone
  -- is recreated past the round, with its expiry.
  local lost = math.min(count, n - 1)
  redis.call('SET', slot, nonce .. ' ' .. gen .. ' ' .. lost, 'EX',
             record_expiry(lease, keep))
  local h = {}
  if not state[1] then h[#h + 1] = 'gen'; h[#h + 1] = gen + 1 end
  local bx = base_expiry(now, tonumber(state[7] or ''), keep)
  if bx then h[#h + 1] = 'bx'; h[#h + 1] = bx end
  if #h > 0 then redis.call('HSET', base, unpack(h)) end
  if bx then redis.call('EXPIRE', base, keep); mark_nonces(nonces, keep) end
  return {'wait', gen, lost, n, math.max(lost - 1, 0), dup and 1 or 0}
end
dup = dup and 1 or 0
local complete = count >= n
-- Pushed before the hash is written: an out key of another type refuses
-- the arrival, and the member just added is taken back.
if complete and not once then
  local r = redis.pcall('RPUSH', outkey, 'ok')
  if type(r) == 'table' and r.err then
    if dup == 0 then redis.call('ZREM', inkey, id) end
    want_type(outkey, 'list')
    error(r)
  end
end
history_arrive(base, id, gen, n, dup, complete and not once, keep, index == 0)
local vals = state[8] == tostring(gen)
if value and dup == 0 then
  redis.call('RPUSH', valkey, value)
  redis.call('EXPIRE', valkey, keep)
  vals = true
end

if jobout and not open_n then
  redis.call('ZADD', jobbar, 0, outkey)
  redis.call('EXPIRE', jobbar, keep)
end

-- This party's arrival, then one write of the hash: the round's terms,
-- count and earliest deadline, or the move past the round.
redis.call('SET', slot, nonce .. ' ' .. gen .. ' ' .. (index + 1), 'EX',
           record_expiry(lease, keep))
local bx = base_expiry(now, tonumber(state[7] or ''), keep)
local h = {}
if bx then h[#h + 1] = 'bx'; h[#h + 1] = bx end
if complete then
  -- The round is complete. Only here (or in release, for the party this
  -- sets as runner) does a round pass.
  h[#h + 1] = 'gen'; h[#h + 1] = gen + 1
  h[#h + 1] = 'c'; h[#h + 1] = 0
  redis.call('HSET', base, unpack(h))
  if bx then
    redis.call('EXPIRE', base, keep); mark_nonces(nonces, keep)
    if xkey then redis.call('EXPIRE', xkey, keep) end
  end
  if once then
    redis.call('SET', runkey, id, 'EX', keep)
    redis.call('EXPIRE', inkey, keep)
  else
    redis.call('EXPIRE', outkey, linger)
    redis.call('EXPIRE', inkey, linger)
    if vals then redis.call('EXPIRE', valkey, linger) end
  end
  return {done, gen, count, n, index, dup}
end
h[#h + 1] = 'c'; h[#h + 1] = count
if dl ~= tonumber(state[6] or '') then h[#h + 1] = 'dl'; h[#h + 1] = dl end
if vals and state[8] ~= tostring(gen) then h[#h + 1] = 'v'; h[#h + 1] = gen end
if not open_n then
  -- The round's first arrival fixes its terms and its keys' expiry; the
  -- waiters' heartbeats renew that expiry only when it runs low.
  h[#h + 1] = 'gen'; h[#h + 1] = gen
  h[#h + 1] = 'n'; h[#h + 1] = n
  h[#h + 1] = 'expect'; h[#h + 1] = expect
  h[#h + 1] = 'reduce'; h[#h + 1] = reduce
  h[#h + 1] = 'ex'; h[#h + 1] = now + keep * 1000
  redis.call('EXPIRE', inkey, keep)
  if xkey then redis.call('EXPIRE', xkey, keep) end
end
redis.call('HSET', base, unpack(h))
-- After the HSET: on a barrier's first arrival the hash did not exist.
if bx then
  redis.call('EXPIRE', base, keep); mark_nonces(nonces, keep)
  if xkey then redis.call('EXPIRE', xkey, keep) end
end
return {'wait', gen, count, n, index, dup}
