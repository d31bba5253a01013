-- A job's break and replies, shared by the job-* scripts (needs time.lua
-- and keys.lua).

--- @include "includes/history.lua"
--
-- <base> = <prefix>:j:{JOB}, a hash: epoch (the run of the name), state
-- ('enter', 'run', 'done', 'over'), att (the attempt: 0, then one more per
-- restart), n, k (restarts allowed), expect, reason (of the last break),
-- kr (how far the keeper's record of the job stands: keeper_cover).
-- <base>:<epoch>:m, a hash: rank:<id>, state:<id>, exit:<id>, nrank;
-- <base>:<epoch>:ids, the members (zset id -> rank).
-- <base>:<epoch>:<att>:in (zset id -> lease deadline ms), :go (list: 'go'
-- once everyone entered, or the break), :out (list: 'ok' once everyone
-- left, the break, or 'stopping <reason>' once the job stops), :left (zset
-- of the members that left), :prog (zset id -> last progress ms, as the
-- renewals carry it), :halt (zset of the members whose command's
-- processes are all stopped). Every key carries {JOB}: one slot.
-- State 'stop' (the job stops: its commands save and exit) ends as
-- 'stopped'; m also holds nonce:<id>, the runner holding that id.

-- One reply shape for every job script, so one decoder reads them all.
local function job_reply(kind, epoch, att, rank, count, n, text, next_ms)
  return {kind, epoch or 0, att or 0, rank or -1, count or 0, n or 0,
          text or '', next_ms or -1}
end

-- A 'go' for member id, with what it would read next of the attempt's
-- rendezvous (lib/rb_job_rdv.c: its field, groups, master), so the entry
-- that completes the round starts its command without another call.
local function job_go_reply(base, epoch, att, id, rank, count, n)
  local r = job_reply('go', epoch, att, rank, count, n)
  local v = redis.call('HMGET', job_key(base, epoch, att, 'rdv'), id,
                       'groups', 'master')
  r[9], r[10], r[11] = v[1], v[2], v[3]
  return r
end

local function job_expire(base, epoch, att, secs)
  redis.call('EXPIRE', job_key(base, epoch, att, 'in'), secs)
  redis.call('EXPIRE', job_key(base, epoch, att, 'go'), secs)
  redis.call('EXPIRE', job_key(base, epoch, att, 'out'), secs)
  redis.call('EXPIRE', job_key(base, epoch, att, 'left'), secs)
  redis.call('EXPIRE', job_key(base, epoch, att, 'bar'), secs)
  redis.call('EXPIRE', job_key(base, epoch, att, 'prog'), secs)
  redis.call('EXPIRE', job_key(base, epoch, att, 'halt'), secs)
  redis.call('EXPIRE', job_key(base, epoch, att, 'rdv'), secs)
end

-- Once, by the entry that completes the attempt's entering round: group
-- the members by host, hosts ordered by their lowest rank, members of one
-- host by rank, as torchrun numbers its agents' workers; each member then
-- reads its own field (O(1)).
local function job_group_hosts(base, epoch, att, inkey)
  local rdv = job_key(base, epoch, att, 'rdv')
  local ids = redis.call('ZRANGE', job_key(base, epoch, nil, 'ids'), 0, -1)
  local group, size, order, members = {}, {}, 0, {}
  for _, mid in ipairs(ids) do
    if redis.call('ZSCORE', inkey, mid) then
      local h = redis.call('HGET', rdv, 'h:' .. mid) or ''
      if not group[h] then group[h] = order; size[h] = 0; order = order + 1 end
      size[h] = size[h] + 1
      members[#members + 1] = {mid, h}
    end
  end
  local seen = {}
  for _, m in ipairs(members) do
    local h = m[2]
    seen[h] = (seen[h] or 0) + 1
    redis.call('HSET', rdv, m[1], (seen[h] - 1) .. ' ' .. size[h] .. ' ' .. group[h])
  end
  redis.call('HSET', rdv, 'groups', order)
end

-- Push outcome onto every round of the job's barriers that has none yet
-- (a member blocked in a wait inside the job blocks on its round's out
-- list).
local function job_break_rounds(base, epoch, att, outcome, linger)
  for _, rout in ipairs(redis.call('ZRANGE', job_key(base, epoch, att, 'bar'), 0, -1)) do
    if redis.call('TYPE', rout)['ok'] ~= 'string' and
       not redis.call('LINDEX', rout, 0) then
      redis.call('RPUSH', rout, outcome)
      redis.call('EXPIRE', rout, linger)
    end
  end
end

-- Break attempt att of epoch: the break goes to both lists (an entering
-- member blocks on go, a running or leaving one on out), so every member
-- wakes at once. With restarts left the job opens the next attempt's
-- entering round; else it is over. Returns the outcome.
local function job_break(base, epoch, att, reason, linger, ttl)
  local outcome = 'broken ' .. reason
  local go, out = job_key(base, epoch, att, 'go'), job_key(base, epoch, att, 'out')
  local prev = redis.call('LINDEX', out, 0)
  if prev then return prev end
  if not redis.call('LINDEX', go, 0) then redis.call('RPUSH', go, outcome) end
  redis.call('RPUSH', out, outcome)
  job_break_rounds(base, epoch, att, outcome, linger)
  local st = redis.call('HMGET', base, 'epoch', 'att', 'k')
  if tonumber(st[1]) == epoch and tonumber(st[2]) == att then
    redis.call('HSET', base, 'reason', reason)
    if att < tonumber(st[3] or '0') then
      redis.call('HSET', base, 'state', 'enter', 'att', att + 1)
    else
      redis.call('HSET', base, 'state', 'over')
      redis.call('EXPIRE', base, linger)
      redis.call('EXPIRE', job_key(base, epoch, nil, 'm'), linger)
      redis.call('EXPIRE', job_key(base, epoch, nil, 'ids'), linger)
    end
  end
  history_job_break(base, epoch, att, reason, st, ttl)
  job_expire(base, epoch, att, linger)
  return outcome
end

-- Drop from the attempt's :bar the rounds that have ended, so that it
-- holds the open rounds alone and does not grow with every round of a long
-- job. A round has ended when its out list holds the outcome, or when the
-- barrier moved past it (its hash names a later round, or is gone) and no
-- --once command of it runs (no run key): past its linger the out list is
-- gone too. Every other round stays, as the break must reach it.
local function job_bar_prune(base, epoch, att)
  local bar = job_key(base, epoch, att, 'bar')
  for _, rout in ipairs(redis.call('ZRANGE', bar, 0, -1)) do
    -- pcall: a key of another type (written by hand) must not stop the
    -- job's renewal; no wait blocks on such a round, so its entry goes.
    local rbase, gen = string.match(rout, '^(.+):(%d+):out$')
    local ended = not rbase or redis.pcall('LINDEX', rout, 0) ~= false
    if not ended then
      local open = redis.pcall('HGET', rbase, 'gen')
      ended = type(open) ~= 'string' and type(open) ~= 'boolean'
      if not ended and tonumber(open or '-1') ~= tonumber(gen) then
        ended = redis.call('TYPE', round_key(rbase, gen, 'run'))['ok'] == 'none'
      end
    end
    if ended then redis.call('ZREM', bar, rout) end
  end
end

-- Members whose lease ran out break the attempt; they are marked gone.
local function job_check_leases(base, epoch, att, now, linger, ttl)
  local inkey = job_key(base, epoch, att, 'in')
  local dead = redis.call('ZRANGEBYSCORE', inkey, '-inf', '(' .. now,
                          'LIMIT', 0, 1)
  if #dead == 0 then return nil end
  redis.call('HSET', job_key(base, epoch, nil, 'm'), 'state:' .. dead[1], 'gone')
  return job_break(base, epoch, att, 'lease of ' .. dead[1] .. ' expired',
                   linger, ttl)
end

-- A member departs a stopping attempt (its command exited, or its lease
-- ran out): the rounds of the job's barriers still open break for the
-- others at once, naming it, and later arrivals are refused (arrive reads
-- :left), so no save waits for a member that is gone. The last departure
-- ends the job ('stopped'); it is never restarted.
local function job_depart(base, epoch, att, id, state, linger)
  local m = job_key(base, epoch, nil, 'm')
  redis.call('ZREM', job_key(base, epoch, att, 'in'), id)
  redis.call('ZREM', job_key(base, epoch, att, 'prog'), id)
  redis.call('ZREM', job_key(base, epoch, att, 'halt'), id)
  redis.call('ZADD', job_key(base, epoch, att, 'left'), 0, id)
  redis.call('HSET', m, 'state:' .. id, state)
  job_break_rounds(base, epoch, att, 'broken ' .. id .. ' left the stopping job',
                   linger)
  if redis.call('ZCARD', job_key(base, epoch, att, 'in')) == 0 then
    redis.call('HSET', base, 'state', 'stopped')
    redis.call('EXPIRE', base, linger)
    redis.call('EXPIRE', m, linger)
    redis.call('EXPIRE', job_key(base, epoch, nil, 'ids'), linger)
    job_expire(base, epoch, att, linger)
  end
end
