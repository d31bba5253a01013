#!lua flags=no-writes
-- job-status: a consistent snapshot of one job, for `rbarrier status`.
--
-- KEYS[1]  the job's base key, <prefix>:j:{JOB}
-- ARGV     none
--
-- Returns {epoch, state, att, n, restarts, now_ms, reason, expect,
--          id1, rank1, state1, deadline1, exit1, progress1, id2, ...}
--   epoch 0 (and nothing else) when no job of that name is kept; state
--   'enter', 'run', 'done' or 'over'; reason the last break's ('' none);
--   members of the epoch in rank order with their state (entering,
--   running, left, failed, gone), lease deadline in the open attempt
--   (-1: not in it, or the job ended), command exit status (-1: none)
--   and the time of its command's last progress as its renewals carried
--   it (server ms; -1: none).

--- @include "includes/time.lua"
--- @include "includes/keys.lua"
--- @include "includes/job.lua"

local base = KEYS[1]
local st = redis.call('HMGET', base, 'epoch', 'state', 'att', 'n', 'k',
                      'reason', 'expect')
local epoch, att = tonumber(st[1]), tonumber(st[3])
if not epoch or not att then return {0} end
local res = {epoch, st[2] or '', att, tonumber(st[4]) or 0,
             tonumber(st[5]) or 0, now_ms(), st[6] or '', st[7] or ''}
local m = job_key(base, epoch, nil, 'm')
local ids = redis.call('ZRANGE', job_key(base, epoch, nil, 'ids'), 0, -1,
                      'WITHSCORES')
local inkey = job_key(base, epoch, att, 'in')
local open = st[2] == 'enter' or st[2] == 'run' or st[2] == 'stop'
local prog = job_key(base, epoch, att, 'prog')
for i = 1, #ids, 2 do
  local id = ids[i]
  local f = redis.call('HMGET', m, 'state:' .. id, 'exit:' .. id)
  res[#res + 1] = id
  res[#res + 1] = tonumber(ids[i + 1])
  res[#res + 1] = f[1] or ''
  res[#res + 1] = open and tonumber(redis.call('ZSCORE', inkey, id) or '-1')
                   or -1
  res[#res + 1] = tonumber(f[2] or '-1')
  res[#res + 1] = open and tonumber(redis.call('ZSCORE', prog, id) or '-1')
                   or -1
end
return res
