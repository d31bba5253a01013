-- job-keep: renew this member's lease, and break the job when any member's
-- lease has run out; say how the attempt stands.
--
-- Atomic because the renewal, the expiry check and the break are one step:
-- a member must never be found dead by a check that ran between its own
-- renewal's read and write.
--
-- KEYS[1]  the job's base key, <prefix>:j:{JOB}
-- KEYS[2]  the keeper of the job's slot (includes/keeper.lua): a
--          renewal it does not cover raises its record of the job
-- ARGV[1]  epoch, ARGV[2] attempt (as job-enter answered)
-- ARGV[3]  member id
-- ARGV[4]  lease in milliseconds (integer >= 1)
-- ARGV[5]  ttl of idle state in seconds, ARGV[6] linger in seconds
-- ARGV[7]  optional: how long ago (ms) this member's command last made
--          progress, published for the stall's blame and for status once
--          it is older than a renewal interval; 'fresh': it progresses
--          again (the entry goes); -1 or absent: nothing to publish
-- ARGV[8]  optional: 'halt' (the command's processes are all stopped),
--          'run' (no longer so), or '' (unchanged)
-- ARGV[9]  optional: this runner's nonce (job-enter's): a runner whose id
--          another runner took over (its lease had passed) is 'lost'
--
-- Returns {kind, epoch, att, rank, count, n, text, next_ms}, kind one of
--   'out'   the attempt ended: text 'ok' (everyone left) or 'broken
--           <reason>' (possibly broken by this call)
--   'go'    everyone entered (the go list holds 'go'); lease renewed
--   'stop'  the job stops (text: 'stopping <reason>'): lease renewed; a
--           member whose lease ran out has departed (job_depart)
--   'wait'  still entering (count of n), running or leaving; lease
--           renewed; next_ms: how long until the earliest other member's
--           lease deadline (-1: none), so the caller looks again just
--           after it instead of a whole slice later
--   'lost'  this member is not in the attempt: the state is gone (Redis
--           restarted without persistence, or the keys were deleted);
--           text 'replaced': another runner holds its id now
-- A bad argument is an error reply, and nothing is written.

--- @include "includes/args.lua"
--- @include "includes/time.lua"
--- @include "includes/keys.lua"
--- @include "includes/job.lua"
--- @include "includes/keeper.lua"

local base = KEYS[1]
local epoch = int_arg(1, 'epoch', 1, 1e15)
local att = int_arg(2, 'attempt', 0, 1e15)
local id = word_arg(3, 'id', false)
local lease = int_arg(4, 'lease ms', 1, 1e12)
local ttl = int_arg(5, 'ttl', 1, 1e9)
local linger = int_arg(6, 'linger', 1, 1e9)
local age = -1
if ARGV[7] == 'fresh' then
  age = -2
elseif ARGV[7] ~= nil and ARGV[7] ~= '-1' then
  age = int_arg(7, 'progress age', 0, 1e12)
end
local halt = ARGV[8] or ''
if halt ~= '' and halt ~= 'halt' and halt ~= 'run' then bad_arg(8, 'halt') end

local inkey = job_key(base, epoch, att, 'in')

-- Few commands per call: this runs every third of a lease for every
-- member of every job (four inside Redis: HMGET, TIME, ZADD, ZRANGE; and
-- the keeper's ZADD and the hash's note of it, about once per job and
-- half a lease: keeper_cover).
-- The base hash says whether this attempt is still open: every script
-- that pushes an outcome onto :out moves the hash on in the same step
-- (state 'done' or 'over', or the next attempt), so an open attempt in
-- the hash is one with no outcome, and only a closed one needs :out read.
-- Likewise its 'run' state is the go list's 'go'.
-- Another runner took this id over (this one's lease had passed): its
-- place is gone, whatever became of the attempt.
local nonce = ARGV[9]
if nonce and nonce ~= '' then
  local holder = redis.call('HGET', job_key(base, epoch, nil, 'm'), 'nonce:' .. id)
  if holder and holder ~= nonce then
    return job_reply('lost', epoch, att, -1, 0, 0, 'replaced')
  end
end
local st = redis.call('HMGET', base, 'epoch', 'att', 'state', 'n', 'exp',
                      'prune', 'kr')
local open = tonumber(st[1]) == epoch and tonumber(st[2]) == att and
             (st[3] == 'enter' or st[3] == 'run')
local stopping = tonumber(st[1]) == epoch and tonumber(st[2]) == att and
                 st[3] == 'stop'
if not open and not stopping then
  local out = redis.call('LINDEX', job_key(base, epoch, att, 'out'), 0)
  if out then return job_reply('out', epoch, att, -1, 0, 0, out) end
end

-- The renewal itself says whether this member is listed (XX CH: 0 when it
-- is not), and the two earliest deadlines say both whether one ran out
-- and when to look next.
local now = now_ms()
-- (0 also when the score did not change: a renewal in the same
-- millisecond as the last one; only then is the member looked up.)
if redis.call('ZADD', inkey, 'XX', 'CH', now + lease, id) == 0 and
   not redis.call('ZSCORE', inkey, id) then
  return job_reply('lost', epoch, att)
end
keeper_cover(base, now + lease, lease, st[7])
-- Progress rides on the renewal, and only while it is older than a
-- renewal interval: a member missing from :prog progressed recently.
if age >= 0 then
  redis.call('ZADD', job_key(base, epoch, att, 'prog'), now - age, id)
elseif age == -2 then
  redis.call('ZREM', job_key(base, epoch, att, 'prog'), id)
end
if halt == 'halt' then
  redis.call('ZADD', job_key(base, epoch, att, 'halt'), now, id)
elseif halt == 'run' then
  redis.call('ZREM', job_key(base, epoch, att, 'halt'), id)
end
local next_ms = -1
local first = redis.call('ZRANGE', inkey, 0, 1, 'WITHSCORES')
for i = 1, #first, 2 do
  if first[i] ~= id then
    local at = tonumber(first[i + 1])
    if at < now and stopping then
      -- A stopping job is not broken by a silent member: it departs.
      job_depart(base, epoch, att, first[i], 'gone', linger)
      next_ms = 0
      break
    elseif at < now then
      redis.call('HSET', job_key(base, epoch, nil, 'm'), 'state:' .. first[i],
                 'gone')
      return job_reply('out', epoch, att, -1, 0, 0,
                       job_break(base, epoch, att, 'lease of ' .. first[i] ..
                                 ' expired', linger, ttl))
    end
    next_ms = at - now
    break
  end
end

-- Nothing of a running job may expire; renewed once half the idle ttl
-- has gone, not on every call.
local n = tonumber(st[4] or '0')
local keep = math.max(ttl, math.ceil(2 * lease / 1000) + 1)
if tonumber(st[5] or '0') < now + keep * 500 then
  redis.call('HSET', base, 'exp', now + keep * 1000)
  redis.call('EXPIRE', base, keep)
  redis.call('EXPIRE', job_key(base, epoch, nil, 'm'), keep)
  redis.call('EXPIRE', job_key(base, epoch, nil, 'ids'), keep)
  job_expire(base, epoch, att, keep)
end
-- The rounds of the job's barriers that ended leave :bar once every three
-- leases, by whichever member renews first: a few commands per job, not
-- per member and renewal.
if open and st[3] == 'run' and tonumber(st[6] or '0') <= now then
  redis.call('HSET', base, 'prune', now + 3 * lease)
  job_bar_prune(base, epoch, att)
end
if stopping then
  return job_reply('stop', epoch, att, -1, 0, n,
                   redis.call('LINDEX', job_key(base, epoch, att, 'out'), 0),
                   next_ms)
end
local go
if open then
  go = st[3] == 'run'
else
  go = redis.call('LINDEX', job_key(base, epoch, att, 'go'), 0) == 'go'
end
if go then return job_reply('go', epoch, att, -1, n, n, '', next_ms) end
return job_reply('wait', epoch, att, -1, redis.call('ZCARD', inkey), n, '',
                 next_ms)
