-- Who was there when a round or a job attempt broke, in bounded words.
--
-- A break's outcome is read by every waiter: listing every member would
-- make one break cost Redis O(N) bytes per party, O(N^2) in all. So the
-- outcome carries counts and the first few ids; `status` lists the rest.

-- At most this many ids are named of those who arrived, and of those
-- missing.
local ROSTER_IDS = 8
-- A missing id is found by looking expected ones up in the members: at
-- most this many per break (tens of microseconds), so the missing ids of
-- a huge --expect list are named when they are among those looked up,
-- and counted in any case.
local ROSTER_LOOKUPS = 16

-- The first expected ids to look up, of a comma-separated list.
local function roster_list(list)
  local ids = {}
  if not list then return ids end
  for e in string.gmatch(list, '[^,]+') do
    if #ids == ROSTER_LOOKUPS then break end
    ids[#ids + 1] = e
  end
  return ids
end

-- '<count>/<n> <verb>: a,b,c' with at most ROSTER_IDS ids (the earliest
-- lease deadlines first), then ' and K more'; with expected ids (a table
-- of at most ROSTER_LOOKUPS, or nil: no --expect), '; missing: x,y' for
-- those not in inkey, and the number of the rest.
local function roster(inkey, count, n, verb, expected)
  local ids = redis.call('ZRANGE', inkey, 0, ROSTER_IDS - 1)
  local text = count .. '/' .. n .. ' ' .. verb .. ': ' ..
               table.concat(ids, ',')
  if count > #ids then text = text .. ' and ' .. (count - #ids) .. ' more' end
  if not expected or #expected == 0 then return text end
  local look = {}
  for i = 1, math.min(#expected, ROSTER_LOOKUPS) do look[i] = expected[i] end
  -- One lookup for them all (ZMSCORE: nil for an id not in the round).
  local scores = redis.call('ZMSCORE', inkey, unpack(look))
  local miss = {}
  for i = 1, #look do
    if #miss == ROSTER_IDS then break end
    if not scores[i] then miss[#miss + 1] = look[i] end
  end
  -- The list holds n ids and every member is on it (arrive refuses anyone
  -- else), so n minus the count is what is missing.
  local missing = math.max((tonumber(n) or 0) - count, #miss)
  text = text .. '; missing: ' .. table.concat(miss, ',')
  local rest = missing - #miss
  if rest > 0 and #miss > 0 then
    text = text .. ' and ' .. rest .. ' more'
  elseif rest > 0 then
    -- None of those looked up is missing: say how many, unnamed.
    text = text .. rest .. (rest == 1 and ' id' or ' ids')
  end
  return text
end
