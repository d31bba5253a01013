-- job-stop: a running member stops its job, for one of two causes.
--   'stall'  its command made no progress for the stall time: the job
--            breaks (a failure: --restarts reruns it), and the reason
--            names the member most likely stuck, which is not always the
--            caller: in a collective hang every member stalls within
--            moments, and the first runner to notice is usually a victim.
--            A member whose command's processes are all stopped is named
--            first (the strongest evidence), else the one whose progress,
--            as the renewals carried it, is oldest.
--   'stop'   its runner was signalled (preemption): the job enters
--            'stop', every member learns it from the out list at once and
--            stops its command once, the job's barriers keep passing so
--            the commands can agree on a step and save, and each member
--            departs as its command ends (job_depart). Never restarted.
--
-- Atomic because the blame reads every member's progress in the same step
-- as the break, and a stop must not race a break: the first outcome wins.
--
-- KEYS[1]  the job's base key, <prefix>:j:{JOB}
-- ARGV[1]  epoch, ARGV[2] attempt
-- ARGV[3]  member id
-- ARGV[4]  'stall' or 'stop'
-- ARGV[5]  stop: the reason, e.g. "m0 was terminated (SIGTERM)" (1..300
--          bytes, no control characters); stall: '-'
-- ARGV[6]  stall: how long ago (ms) the caller's command last made
--          progress; stop: -1
-- ARGV[7]  stall: 'halt' when the caller's command's processes are all
--          stopped, else ''
-- ARGV[8]  ttl of idle state in seconds, ARGV[9] linger in seconds
--
-- Returns {kind, epoch, att, rank, count, n, text, next_ms}, kind one of
--   'out'     the attempt had ended already: text is its outcome (it wins)
--   'broken'  this stall broke the job; text is the outcome
--   'stop'    the job stops (by this call or an earlier stop): text is
--             'stopping <reason>'
--   'lost'    this member is not in the attempt (state lost)
-- A bad argument is an error reply, and nothing is written.

--- @include "includes/args.lua"
--- @include "includes/time.lua"
--- @include "includes/keys.lua"
--- @include "includes/job.lua"

local base = KEYS[1]
local epoch = int_arg(1, 'epoch', 1, 1e15)
local att = int_arg(2, 'attempt', 0, 1e15)
local id = word_arg(3, 'id', false)
local mode = ARGV[4]
if mode ~= 'stall' and mode ~= 'stop' then bad_arg(4, 'mode') end
local what = ARGV[5]
if type(what) ~= 'string' or #what == 0 or #what > 300 or
   string.find(what, '[%z\1-\31\127]') then
  bad_arg(5, 'reason')
end
local age = -1
if mode == 'stall' then age = int_arg(6, 'progress age', 0, 1e12) end
local halt = ARGV[7]
if halt ~= '' and halt ~= 'halt' then bad_arg(7, 'halt') end
local ttl = int_arg(8, 'ttl', 1, 1e9)
local linger = int_arg(9, 'linger', 1, 1e9)

local inkey = job_key(base, epoch, att, 'in')
local outkey = job_key(base, epoch, att, 'out')
local out = redis.call('LINDEX', outkey, 0)
if out and string.sub(out, 1, 9) == 'stopping ' then
  return job_reply('stop', epoch, att, -1, 0, 0, out)
end
if out then return job_reply('out', epoch, att, -1, 0, 0, out) end
if not redis.call('ZSCORE', inkey, id) then return job_reply('lost', epoch, att) end
local n = tonumber(redis.call('HGET', base, 'n') or '0')
local m = job_key(base, epoch, nil, 'm')
local now = now_ms()

-- Seconds as a person reads them: 3s, 3.4s, 12s.
local function secs(ms)
  if ms >= 10000 then return math.floor(ms / 1000) .. 's' end
  local t = string.format('%.1f', math.floor(ms / 100) / 10)
  return (string.gsub(t, '%.0$', '')) .. 's'
end

if mode == 'stall' then
  local prog = job_key(base, epoch, att, 'prog')
  local haltkey = job_key(base, epoch, att, 'halt')
  redis.call('ZADD', prog, now - age, id)
  if halt == 'halt' then redis.call('ZADD', haltkey, now, id) end
  -- The oldest evidence first; a member no longer in the attempt (it
  -- left: its command is done) is no suspect.
  local who, note = nil, ''
  for _, h in ipairs(redis.call('ZRANGE', haltkey, 0, 0)) do
    if redis.call('ZSCORE', inkey, h) then
      who, note = h, ' (its processes are stopped)'
    end
  end
  if not who then who = redis.call('ZRANGE', prog, 0, 0)[1] end
  local since = tonumber(redis.call('ZSCORE', prog, who) or now - age)
  redis.call('HSET', m, 'state:' .. who, 'stuck')
  if who ~= id then redis.call('HSET', m, 'state:' .. id, 'failed') end
  return job_reply('broken', epoch, att, -1, 0, n,
                   job_break(base, epoch, att, who .. ' made no progress for ' ..
                             secs(now - since) .. note, linger, ttl))
end

-- A stop. Members that left before it (their command is done) depart now:
-- the job ends when the last running command has.
local st = redis.call('HMGET', base, 'epoch', 'att', 'state')
if tonumber(st[1]) ~= epoch or tonumber(st[2]) ~= att or st[3] ~= 'run' then
  return job_reply('lost', epoch, att)
end
local outcome = 'stopping ' .. what
redis.call('RPUSH', outkey, outcome)
redis.call('HSET', base, 'state', 'stop', 'reason', what)
history_job(base, 'stop', id, epoch, att, nil, ttl)
local left = redis.call('ZRANGE', job_key(base, epoch, att, 'left'), 0, -1)
for _, l in ipairs(left) do redis.call('ZREM', inkey, l) end
if #left > 0 then
  job_break_rounds(base, epoch, att, 'broken ' .. left[1] ..
                   ' left the stopping job', linger)
end
return job_reply('stop', epoch, att, -1, 0, n, outcome)
