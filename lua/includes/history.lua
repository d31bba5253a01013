-- Each name's history, appended by the scripts that already run, so seeing
-- the job costs no round trip (doc/SEEING.md):
--
--   <prefix>:h:{NAME}      stream, capped near HISTORY_CAP events (MAXLEN ~:
--                          Redis trims whole nodes, so it may hold up to one
--                          node, 100 entries by default, more); the string
--                          'off' instead while the name's history is off
--   <prefix>:h:{NAME}:n    hash of counters that never go back (HINCRBY):
--                          what a capped stream cannot count
--
-- The keys carry the name's own {tag} (a barrier inside a job: the job's,
-- and the event says which barrier), so they sit in the slot of the key the
-- script was given and a cluster runs the script as before. The event's
-- time is its stream id (Redis' clock, as the leases). History decides
-- nothing: no script reads it back, and the protocol models leave it out.
--
-- Cost: one XADD per event, and per round (or lock grant, or job entry)
-- one EXPIRE of each key and one HINCRBY. The off switch costs nothing:
-- the XADD that meets the string fails, and nothing else is done.

-- (needs keys.lua: history_key)

local HISTORY_CAP = 10000

-- Append one event (ev: field, value, ...) and bump counter `count` (nil:
-- none), unless the name's history is off. ttl: seconds both keys live
-- from now (the callers pass it once a round, or a grant, or an entry);
-- nil: their expiries are left as they are; 'keep' (a script that does
-- not know the name's ttl): a key without an expiry gets a day. A counter
-- hash just made gets an expiry at once. Returns whether it recorded.
local function history(base, ev, count, ttl)
  local h, rest = history_key(base)
  if rest ~= '' then
    ev[#ev + 1] = 'in'
    ev[#ev + 1] = string.sub(rest, 2)
  end
  local r = redis.pcall('XADD', h, 'MAXLEN', '~', HISTORY_CAP, '*',
                        unpack(ev))
  if type(r) == 'table' and r.err then return false end
  if ttl == 'keep' then
    if redis.call('TTL', h) < 0 then redis.call('EXPIRE', h, 86400) end
  elseif ttl then
    redis.call('EXPIRE', h, ttl)
    redis.call('EXPIRE', h .. ':n', ttl)
  end
  if count and redis.call('HINCRBY', h .. ':n', count, 1) == 1 and
     redis.call('TTL', h .. ':n') < 0 then
    redis.call('EXPIRE', h .. ':n', type(ttl) == 'number' and ttl or 86400)
  end
  return true
end

-- An arrival (a repeated one under another nonce is not a new arrival);
-- passed: it completed the round and passed it (o=ok); first: the round's
-- first arrival, which renews the history's expiry (ttl).
local function history_arrive(base, id, gen, n, dup, passed, ttl, first)
  if dup == 1 and not passed then return end
  local ev = {'k', 'b', 'e', 'arrive', 'id', id, 'g', gen, 'n', n}
  if passed then
    ev[#ev + 1] = 'o'
    ev[#ev + 1] = 'ok'
  end
  history(base, ev, passed and 'passed' or nil, first and ttl or nil)
end

-- What broke a round, as a word for counting: the reasons the scripts and
-- the library write (a party's own words end up as 'other').
local function history_cause(reason)
  if string.find(reason, '^lease of .* expired') then return 'lease' end
  if string.find(reason, ' timed out after ') then return 'timeout' end
  if string.find(reason, ' interrupted') then return 'interrupted' end
  if reason == 'reset' then return 'reset' end
  if string.find(reason, 'lost') or string.find(reason, 'deleted') then
    return 'lost'
  end
  if string.find(reason, 'made no progress') then return 'stall' end
  if string.find(reason, '^once%-command ') or
     string.find(reason, '\'s command ') then
    return 'command'
  end
  return 'other'
end

local function history_break(base, gen, reason)
  local cause = history_cause(reason)
  history(base, {'k', 'b', 'e', 'break', 'g', gen, 'c', cause, 'r', reason},
          'broken:' .. cause, 'keep')
end

-- A job's member entering (e=enter) or leaving (e=leave) attempt att of
-- epoch; last: the one that completed the meeting ('go': the attempt
-- runs; 'done': the job ended well), counted.
local function history_job(base, e, id, epoch, att, last, ttl)
  local ev = {'k', 'j', 'e', e, 'id', id, 'g', att, 'ep', epoch}
  if last then
    ev[#ev + 1] = 'o'
    ev[#ev + 1] = last
  end
  history(base, ev, last and ('job_' .. last) or nil, ttl)
end

-- A job's attempt broken; st is the job hash's epoch, att, k as the break
-- read them: with restarts left, the break restarts the job (counted).
local function history_job_break(base, epoch, att, reason, st, ttl)
  local cause = history_cause(reason)
  local restart = tonumber(st[1]) == epoch and tonumber(st[2]) == att and
                  att < tonumber(st[3] or '0')
  local ev = {'k', 'j', 'e', 'break', 'g', att, 'ep', epoch, 'c', cause,
              'r', reason}
  if restart then
    ev[#ev + 1] = 'restart'
    ev[#ev + 1] = '1'
  end
  if history(base, ev, 'job_broken:' .. cause, ttl) and restart then
    redis.call('HINCRBY', history_key(base) .. ':n', 'job_restarts', 1)
  end
end

-- A lock's event: 'queue' (a waiter got in line), 'grant', 'release',
-- 'expire' (a holder's lease ran out), 'reset'; token for a grant or a
-- release. Grants and expiries are counted.
local function history_lock(base, e, id, token, ttl)
  local ev = {'k', 'l', 'e', e}
  if id then
    ev[#ev + 1] = 'id'
    ev[#ev + 1] = id
  end
  if token then
    ev[#ev + 1] = 'g'
    ev[#ev + 1] = token
  end
  local count = nil
  if e == 'grant' or e == 'expire' or e == 'reset' then
    count = 'lock_' .. e
  end
  -- Expiries renewed once a hand-off, at the grant.
  if e ~= 'grant' then
    if ttl then ttl = nil else ttl = 'keep' end
  end
  history(base, ev, count, ttl)
end
