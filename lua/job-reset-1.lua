-- job-reset: break a job with 'reset' and use up its restarts, so every
-- member stops (exit 3) and the next run of the name starts a new epoch.
--
-- KEYS[1]  the job's base key, <prefix>:j:{JOB}
-- ARGV[1]  ttl of idle state in seconds, ARGV[2] linger in seconds
--
-- Returns {epoch, members}: the epoch broken and how many members its
-- attempt held ({0, 0}: no job open). A bad argument is an error reply.

--- @include "includes/args.lua"
--- @include "includes/time.lua"
--- @include "includes/keys.lua"
--- @include "includes/job.lua"

local base = KEYS[1]
local ttl = int_arg(1, 'ttl', 1, 1e9)
local linger = int_arg(2, 'linger', 1, 1e9)
local t = redis.call('TYPE', base)['ok']
if t ~= 'none' and t ~= 'hash' then
  redis.call('DEL', base)
  return {0, 0}
end
local st = redis.call('HMGET', base, 'epoch', 'state', 'att')
local epoch, att = tonumber(st[1]), tonumber(st[3])
if not epoch or not att or (st[2] ~= 'enter' and st[2] ~= 'run') then
  return {0, 0}
end
local members = redis.call('ZCARD', job_key(base, epoch, att, 'in'))
redis.call('HSET', base, 'k', att)
job_break(base, epoch, att, 'reset', linger, ttl)
return {epoch, members}
