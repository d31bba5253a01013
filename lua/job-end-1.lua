-- job-end: a member leaves its attempt, well ('leave': its command exited
-- 0) or badly ('fail': its command failed, its runner was interrupted or
-- timed out entering). A failure breaks the job for every member at once;
-- the last member to leave ends the attempt with 'ok'.
--
-- Atomic because the outcome already there must win: a break and the last
-- leave racing must leave one outcome, seen by all.
--
-- KEYS[1]  the job's base key, <prefix>:j:{JOB}
-- ARGV[1]  epoch, ARGV[2] attempt
-- ARGV[3]  member id
-- ARGV[4]  'leave', 'fail' (ARGV[5] is the reason as given), or 'abandon'
--          (the reason gets '(k/n entered: a,b[; missing: x])' appended,
--          bounded: the first few ids and counts, includes/roster.lua)
-- ARGV[5]  the reason, e.g. "w2's command exited 7" (1..300 bytes, no
--          control characters); '-' for leave
-- ARGV[6]  the command's exit status (0..255, 128+signal), or -1: none
-- ARGV[7]  ttl of idle state in seconds, ARGV[8] linger in seconds
--
-- Returns {kind, epoch, att, rank, count, n, text, next_ms}, kind one of
--   'out'     the attempt has ended: text is its outcome ('ok' when this
--             leave was the last, or a break already there, which wins,
--             or 'stopping <reason>': the job stops and this member has
--             departed, however its command ended)
--   'broken'  this call broke the job; text is the outcome
--   'wait'    left; the others still run: keep renewing and block on out
--   'lost'    this member is not in the attempt (state lost)
-- A bad argument is an error reply, and nothing is written.

--- @include "includes/args.lua"
--- @include "includes/time.lua"
--- @include "includes/keys.lua"
--- @include "includes/job.lua"
--- @include "includes/roster.lua"

local base = KEYS[1]
local epoch = int_arg(1, 'epoch', 1, 1e15)
local att = int_arg(2, 'attempt', 0, 1e15)
local id = word_arg(3, 'id', false)
local mode = ARGV[4]
if mode ~= 'leave' and mode ~= 'fail' and mode ~= 'abandon' then
  bad_arg(4, 'mode')
end
local what = ARGV[5]
if type(what) ~= 'string' or #what == 0 or #what > 300 or
   string.find(what, '[%z\1-\31\127]') then
  bad_arg(5, 'reason')
end
local status = ARGV[6]
if status ~= '-1' then status = int_arg(6, 'status', 0, 255) end
local ttl = int_arg(7, 'ttl', 1, 1e9)
local linger = int_arg(8, 'linger', 1, 1e9)

local inkey = job_key(base, epoch, att, 'in')
local outkey = job_key(base, epoch, att, 'out')
local m = job_key(base, epoch, nil, 'm')
local out = redis.call('LINDEX', outkey, 0)
local stopping = out and string.sub(out, 1, 9) == 'stopping '
if out and not stopping then return job_reply('out', epoch, att, -1, 0, 0, out) end
if not redis.call('ZSCORE', inkey, id) then return job_reply('lost', epoch, att) end
local n = tonumber(redis.call('HGET', base, 'n') or '0')
if stopping then
  -- The job stops: however the command ended, this member departs.
  if status ~= '-1' then redis.call('HSET', m, 'exit:' .. id, status) end
  job_depart(base, epoch, att, id, mode == 'leave' and 'left' or 'failed',
             linger)
  return job_reply('out', epoch, att, -1, 0, n, out)
end

if mode == 'leave' then
  local leftkey = job_key(base, epoch, att, 'left')
  redis.call('ZADD', leftkey, 0, id)
  -- Its command is done: no suspect of a stall.
  redis.call('ZREM', job_key(base, epoch, att, 'prog'), id)
  redis.call('ZREM', job_key(base, epoch, att, 'halt'), id)
  redis.call('HSET', m, 'state:' .. id, 'left', 'exit:' .. id, 0)
  local left = redis.call('ZCARD', leftkey)
  history_job(base, 'leave', id, epoch, att, left >= n and 'done', ttl)
  if left >= n then
    redis.call('RPUSH', outkey, 'ok')
    redis.call('HSET', base, 'state', 'done')
    redis.call('HDEL', base, 'reason')
    redis.call('EXPIRE', base, linger)
    redis.call('EXPIRE', m, linger)
    redis.call('EXPIRE', job_key(base, epoch, nil, 'ids'), linger)
    job_expire(base, epoch, att, linger)
    return job_reply('out', epoch, att, -1, left, n, 'ok')
  end
  return job_reply('wait', epoch, att, -1, left, n)
end

local reason = what
if mode == 'abandon' then
  reason = what .. ' (' .. roster(inkey, redis.call('ZCARD', inkey), n,
                                  'entered',
                                  roster_list(redis.call('HGET', base, 'expect')))
           .. ')'
end
redis.call('HSET', m, 'state:' .. id, 'failed')
if status ~= '-1' then redis.call('HSET', m, 'exit:' .. id, status) end
return job_reply('broken', epoch, att, -1, 0, n,
                 job_break(base, epoch, att, reason, linger, ttl))
