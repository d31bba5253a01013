-- job-enter: enter a job's entering round (a first run, or the re-entering
-- round after a restart).
--
-- Atomic because the count, the ranks and the job's state move together:
-- two runners completing one entering round at once would otherwise both
-- (or neither) release it, and a runner of a new epoch could join an old
-- one.
--
-- KEYS[1]  the job's base key, <prefix>:j:{JOB} (hash, see includes/job.lua);
--          every other key is derived from it and carries the same tag
-- ARGV[1]  member id (1..200 bytes, no whitespace, braces or commas)
-- ARGV[2]  n, the member count (1..100000)
-- ARGV[3]  lease in milliseconds (integer >= 1)
-- ARGV[4]  ttl of idle state in seconds (integer >= 1)
-- ARGV[5]  linger of ended attempts in seconds (integer >= 1)
-- ARGV[6]  restarts allowed (0..1000000)
-- ARGV[7]  'new' (a runner that starts: join the epoch that waits for this
--          id, or start a new one), or the epoch this runner re-enters
-- ARGV[8]  with an epoch in ARGV[7], the attempt it re-enters; else '0'
-- ARGV[9]  the expected ids, comma-separated, or '' (ranks then follow the
--          order of first entry)
-- ARGV[10] rendezvous: this member's host (a word; members with one host
--          share LOCAL_* values), or absent: no rendezvous data
-- ARGV[11] rendezvous: '<addr> <port>', where rank 0 would serve torch's
--          store; the attempt keeps rank 0's (see includes/job.lua, :rdv)
-- ARGV[12] this runner's nonce (1..64 bytes, no whitespace): one runner
--          holds an id; its retries and re-entries carry the same nonce
--          (absent: no check of a duplicate id)
-- KEYS[2]  the keeper of the job's slot, <prefix>:k:{T}
--          (includes/keeper.lua): read by a new runner's entry, and the
--          record of the job's members raised by every entry
-- ARGV[13] after a 'keeper' reply: '<k> <found>' (the client loaded the
--          marker of class k, and found markers up to class found, -1:
--          none); else '' or absent
--
-- Returns {kind, epoch, att, rank, count, n, text, next_ms}, kind one of
--   'wait'  entered; block on the attempt's go list
--   'go'    this entry completed the entering round ('go' pushed), or
--           found its own entry of a running attempt (a lost reply); the
--           reply goes on with this member's rendezvous values, as
--           lib/rb_job_rdv.c reads them: its field, groups, master (nil
--           where none was kept)
--   'busy'  a job of this name runs without this id: block on that
--           attempt's out list (epoch, att), then enter again
--   'badn'  the open job has another n, restarts or expected ids (text:
--           'n=4', 'restarts=2', 'expect=a,b'); nothing written
--   'over'  the attempt this runner meant to re-enter is gone (the job
--           ended or was reset); text: the job's last reason
--   'dup'   another runner (another nonce) holds this id and its lease
--           runs (next_ms: until its deadline); nothing written. Once the
--           lease has passed, the newcomer takes the place while the job
--           enters, or the lease's expiry breaks a running one
--   'keeper'  a new runner's entry: load the marker of class <rank>
--           first, and when text is 'missing' look for markers too (see
--           includes/keeper.lua); nothing written
--   'quarantine'  the job's state was lost while its members may still
--           run (next_ms: until when): no new run before then; nothing
--           written
-- A bad argument is an error reply, and nothing is written.

--- @include "includes/args.lua"
--- @include "includes/time.lua"
--- @include "includes/keys.lua"
--- @include "includes/job.lua"
--- @include "includes/keeper.lua"

local base = KEYS[1]
local id = word_arg(1, 'id', false)
local n = int_arg(2, 'n', 1, 100000)
local lease = int_arg(3, 'lease ms', 1, 1e12)
local ttl = int_arg(4, 'ttl', 1, 1e9)
local linger = int_arg(5, 'linger', 1, 1e9)
local k = int_arg(6, 'restarts', 0, 1000000)
local want = ARGV[7]
local want_att = int_arg(8, 'attempt', 0, 1e15)
if want ~= 'new' then want = int_arg(7, 'epoch', 1, 1e15) end
local expect = ARGV[9]
if type(expect) ~= 'string' or #expect > 100000 or
   string.find(expect, '[%z\1-\32\127{}]') then
  bad_arg(9, 'expected ids')
end
local host, endpoint = ARGV[10], ARGV[11]
if host ~= nil then
  host = word_arg(10, 'host', false)
  if type(endpoint) ~= 'string' or
     not string.match(endpoint, '^[%w%.:%-%%]+ %d+$') or #endpoint > 100 then
    bad_arg(11, 'endpoint')
  end
end
local nonce = ARGV[12]
if nonce ~= nil and (#nonce == 0 or #nonce > 64 or
                     string.find(nonce, '[%z\1-\32\127]')) then
  bad_arg(12, 'nonce')
end
local rank_in_expect = nil
if expect ~= '' then
  local i = 0
  for e in string.gmatch(expect, '[^,]+') do
    if e == id then rank_in_expect = i end
    i = i + 1
  end
  if rank_in_expect == nil or i ~= n then bad_arg(9, 'expected ids') end
end

local now = now_ms()
local keep = math.max(ttl, math.ceil(2 * lease / 1000) + 1)

-- A new runner: no new run starts while a member of the last one may
-- still run its command. That is the case when the job's state was lost
-- while its members ran (a job hash that is not there, with the keeper's
-- record of members whose lease runs; or the whole keeper lost), and when
-- the last run broke or was stopped or reset ('over', 'stopped'): its
-- members stop their commands, which may take their --kill-after, and
-- renew no more, so their watchdogs end them by their leases, which the
-- record covers. Only a run that passed ('done': every command exited)
-- or one still open needs no wait.
if want == 'new' then
  local state = redis.call('HGET', base, 'state')
  local open = state == 'enter' or state == 'run' or state == 'stop'
  local marked = ARGV[13]
  if marked == '' then marked = nil end
  local ok, till, why = keeper_check(base, lease, now,
                                     not open and state ~= 'done', marked)
  if not ok then return job_reply('keeper', 0, 0, till, 0, n, why) end
  if till and not open then
    return job_reply('quarantine', 0, 0, -1, 0, n,
                     state and 'the last run of the job ended ' .. state ..
                     ' while its members may still run' or
                     'the state of a run was lost', till - now)
  end
end

local function open_epoch(epoch)
  redis.call('DEL', base)
  redis.call('HSET', base, 'epoch', epoch, 'state', 'enter', 'att', 0,
             'n', n, 'k', k, 'expect', expect)
end

local function join(epoch, att)
  local m = job_key(base, epoch, nil, 'm')
  local inkey = job_key(base, epoch, att, 'in')
  local rank = redis.call('HGET', m, 'rank:' .. id)
  if rank then
    rank = tonumber(rank)
  elseif rank_in_expect then
    rank = rank_in_expect
  else
    rank = tonumber(redis.call('HGET', m, 'nrank') or '0')
    redis.call('HSET', m, 'nrank', rank + 1)
  end
  redis.call('HSET', m, 'rank:' .. id, rank, 'state:' .. id, 'entering')
  if nonce then redis.call('HSET', m, 'nonce:' .. id, nonce) end
  redis.call('ZADD', job_key(base, epoch, nil, 'ids'), rank, id)
  redis.call('HDEL', m, 'exit:' .. id)
  redis.call('ZADD', inkey, now + lease, id)
  keeper_hold(base, now + lease)
  local count = redis.call('ZCARD', inkey)
  history_job(base, 'enter', id, epoch, att, count >= n and 'go', keep)
  redis.call('EXPIRE', base, keep)
  redis.call('EXPIRE', m, keep)
  redis.call('EXPIRE', job_key(base, epoch, nil, 'ids'), keep)
  job_expire(base, epoch, att, keep)
  if host then
    local rdv = job_key(base, epoch, att, 'rdv')
    redis.call('HSET', rdv, 'h:' .. id, host)
    if rank == 0 then redis.call('HSET', rdv, 'master', endpoint) end
  end
  if count >= n then
    if host then job_group_hosts(base, epoch, att, inkey) end
    redis.call('RPUSH', job_key(base, epoch, att, 'go'), 'go')
    redis.call('HSET', base, 'state', 'run')
    local ids = redis.call('ZRANGE', inkey, 0, -1)
    for _, mid in ipairs(ids) do
      redis.call('HSET', m, 'state:' .. mid, 'running')
    end
    return job_go_reply(base, epoch, att, id, rank, count, n)
  end
  return job_reply('wait', epoch, att, rank, count, n)
end

-- At most a few turns: a dead entering member or a stale copy of this id
-- breaks the attempt, and the state read again decides.
for _ = 1, 3 do
  local st = redis.call('HMGET', base, 'epoch', 'state', 'att', 'n', 'k',
                        'expect')
  local epoch, state, att = tonumber(st[1]), st[2], tonumber(st[3])
  if state and (not epoch or not att) then
    error({err = 'ERR damaged job state in ' .. base ..
                 ' (a reset --job repairs it)'})
  end
  local open = state == 'enter' or state == 'run'
  if want ~= 'new' then
    if not open or epoch ~= want or att ~= want_att then
      return job_reply('over', epoch, att, -1, 0, n,
                       redis.call('HGET', base, 'reason') or 'the job ended')
    end
  elseif not open then
    -- A new run of the name. A base key that expired leaves no epoch to
    -- count on: the clock gives one no lingering key of an old run has.
    open_epoch(epoch and epoch + 1 or now)
    return join(epoch and epoch + 1 or now, 0)
  end
  if tonumber(st[4]) ~= n then return job_reply('badn', epoch, att, -1, 0, n, 'n=' .. st[4]) end
  if tonumber(st[5]) ~= k then return job_reply('badn', epoch, att, -1, 0, n, 'restarts=' .. st[5]) end
  if (st[6] or '') ~= expect then
    return job_reply('badn', epoch, att, -1, 0, n, 'expect=' .. (st[6] or ''))
  end
  local m = job_key(base, epoch, nil, 'm')
  local inkey = job_key(base, epoch, att, 'in')
  -- One live runner per id: another nonce on a listed id waits for that
  -- lease; past it, an entering round's place is taken over (before the
  -- lease check below would break the round for it).
  local held = redis.call('ZSCORE', inkey, id)
  if held and nonce and redis.call('HGET', m, 'nonce:' .. id) ~= nonce then
    if tonumber(held) >= now then
      return job_reply('dup', epoch, att, -1, 0, n, '', tonumber(held) - now)
    end
    if state == 'enter' then redis.call('ZADD', inkey, now + lease, id) end
  elseif held and state == 'run' then
    -- This runner's own entry, whose reply was lost: its place again.
    return job_go_reply(base, epoch, att, id,
                        tonumber(redis.call('HGET', m, 'rank:' .. id)), n, n)
  end
  local broke = job_check_leases(base, epoch, att, now, linger, ttl)
  if not broke then
    if state == 'enter' then
      if att == 0 or redis.call('HGET', m, 'rank:' .. id) then
        return join(epoch, att)
      end
      return job_reply('busy', epoch, att, -1, 0, n)
    end
    return job_reply('busy', epoch, att, -1, 0, n)
  end
end
return job_reply('busy', 0, 0, -1, 0, n)
