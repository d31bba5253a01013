-- The keeper: what tells a name whose state was lost from a fresh one.
--
-- A lock's holder may run its command until its lease ends by its own
-- clock, even if Redis has lost the lock meanwhile (FLUSHALL, FLUSHDB,
-- eviction, a DEL of the name's keys). A new grant must not come before
-- then; a fresh name must still be granted at once. Two records do it,
-- one per cluster slot (the slot of the names they cover):
--
--   <prefix>:k:{T}     hash, no expiry (volatile-* eviction never takes
--                      it): c, the highest lease class marked on this
--                      server (below); q, the end (ms) of the quarantine
--                      after this hash itself was found lost (0: none)
--   <prefix>:k:{T}:d   zset, no expiry: a name's base key -> the latest
--                      lease deadline (ms) its holders were given (for a
--                      job, up to half a lease beyond: keeper_cover);
--                      there only while the name has holders
--
-- {T} is a tag whose slot is the names' slot (lib/rb_keys.c picks it).
-- The zset catches the loss of one name's keys: a name with no holder
-- whose entry here is still ahead lost its holders with its state, and
-- nothing is granted before that deadline.
--
-- The hash is lost only with everything else (FLUSHALL, FLUSHDB, an
-- allkeys-* eviction). What tells that from a server that never saw
-- rbarrier is a marker in the server's script cache, which FLUSHALL
-- leaves alone: before the hash records lease class k, the client loads
-- the script "marker of this keeper, class k" (any lease up to 2^k ms),
-- after the base marker "this keeper was here". A missing hash with the
-- base marker in the cache means lost state; the highest class marked
-- bounds how long an old holder may still run, and the whole slot waits
-- that long (lua/README.md "The keeper" has the client's part). A restart, or SCRIPT FLUSH, empties the
-- cache too: that loss is not detected (README, doc/LOCKS.md).
--
-- Every script that takes KEYS[2] as the keeper checks it first.

-- The smallest class k (>= 10: about a second) with 2^k ms >= lease.
local function keeper_class(lease)
  local k = 10
  while 2 ^ k < lease do k = k + 1 end
  return k
end

-- KEYS[2] must be the keeper of the base key's prefix: a caller cannot
-- make a script write to another key.
local function keeper_key(base)
  local kh = KEYS[2]
  local prefix = string.match(base, '^([^{]*):%a:{')
  if not kh or not prefix or
     string.sub(kh, 1, #prefix + 4) ~= prefix .. ':k:{' or
     string.find(kh, '}', #prefix + 5, true) ~= #kh then
    error({err = 'ERR KEYS[2] must be the keeper key <prefix>:k:{TAG}'})
  end
  return kh
end

-- The name's holders were given a lease up to deadline: the keeper's
-- record only grows while they hold.
local function keeper_hold(base, deadline)
  redis.call('ZADD', keeper_key(base) .. ':d', 'GT',
             string.format('%.0f', deadline), base)
end

-- The same for renewals that come often (a job's members, each every
-- third of its lease): the record is raised half a lease beyond what the
-- renewal needs, and the name's own hash notes how far it stands (field
-- 'kr', read by the caller with the hash's other fields: noted). A renewal
-- the note covers writes nothing, so the record costs two commands per
-- job and half a lease, not one per member and renewal. The note is never
-- above the record (ZADD GT: it only grows while the name is held, and
-- one dropped for having passed leaves a note that has passed too), so a
-- renewal it covers is covered (by the scripts: a record removed from
-- outside, an allkeys-* eviction of the zset or a DEL, is written again
-- only once a renewal passes the note, up to half a lease later, against
-- a renewal interval when every renewal wrote it). The price: the record
-- may stand half a lease past the last lease given, and so may a new
-- run's wait.
local function keeper_cover(base, deadline, lease, noted)
  if (tonumber(noted or '') or 0) >= deadline then return end
  local to = deadline + math.ceil(lease / 2)
  keeper_hold(base, to)
  redis.call('HSET', base, 'kr', string.format('%.0f', to))
end

-- The name has no holder left.
local function keeper_free(base)
  redis.call('ZREM', keeper_key(base) .. ':d', base)
end

-- On a request's first call: the end (ms) of the quarantine the request
-- must wait out because state was lost, or nil. check_record: whether a
-- record of the name still ahead means its state was lost (the caller
-- knows no run of the name is on; a lock checks on every grant path
-- instead, lock_quarantine). marked: the client's 'k found' after a
-- 'keeper' reply, or nil: k, the class whose marker it loaded (0: none);
-- found, what its look at the cache saw (the highest class marked, -1
-- none, -2 no look). Returns false, class, why when the client must do
-- its part first (why 'missing': the hash is gone, look at the cache;
-- 'class': load the marker of class, the hash does not record it yet).
--
-- The order is what keeps a crowd's first use from looking like a loss:
-- a marker of a class is loaded only once the hash stands (after a
-- 'class' reply), so a marker in the cache with no hash means the hash
-- was lost, never that another client is still making it. The hash is
-- made from a look: with no class marked, empty (c 0: nothing granted
-- under it yet); with class k marked, lost state, a quarantine of 2^k ms.
local function keeper_check(base, lease, now, check_record, marked)
  local kh = keeper_key(base)
  local need = keeper_class(lease)
  local st = redis.call('HMGET', kh, 'c', 'q')
  local c, q = tonumber(st[1] or ''), tonumber(st[2] or '') or 0
  local loaded, found
  if marked then
    loaded, found = string.match(marked, '^(%d+) (%-?%d+)$')
    loaded, found = tonumber(loaded), tonumber(found)
    if not loaded or (loaded ~= 0 and loaded < 10) or loaded > 40 or
       found < -2 or found > 40 or (found >= 0 and found < 10) then
      error({err = 'ERR bad marker argument'})
    end
  end
  if not c then
    -- A look made before the hash went (found -2: none at all) says
    -- nothing of what is in the cache now.
    if not found or found == -2 then
      return false, need, 'missing'
    end
    -- A class marked and no hash: everything was lost, and a holder of
    -- any lease up to 2^found ms may still run. Else a hash never made
    -- here (or lost before anything was granted under it).
    c = math.max(found, 0)
    q = found >= 10 and now + 2 ^ found or 0
    redis.call('HSET', kh, 'c', c, 'q', string.format('%.0f', q))
  end
  if c < need then
    if not loaded or loaded < need then return false, need, 'class' end
    -- need, not loaded: a class is recorded only as far as this request
    -- needed its marker (a larger 'loaded' is a claim, not a marker seen).
    redis.call('HSET', kh, 'c', need)
  end
  local till = q >= now and q or nil
  local d = kh .. ':d'
  local rec = check_record and
              tonumber(redis.call('ZSCORE', d, base) or '')
  if rec and rec >= now then
    -- Nothing on, yet one was given a lease still running: the name's
    -- state went without its holders letting go.
    if not till or rec > till then till = rec end
  elseif rec then
    redis.call('ZREM', d, base)
  end
  -- Names whose holders died and that nobody asked for since: two
  -- passed records dropped per request keep the zset to live names.
  local stale = redis.call('ZRANGE', d, '-inf', '(' .. now, 'BYSCORE',
                           'LIMIT', 0, 2)
  if #stale > 0 then redis.call('ZREM', d, unpack(stale)) end
  return true, till
end
