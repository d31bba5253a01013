-- Who was there when a round or a job attempt broke, in bounded words.
--
-- A break's outcome is read by every waiter: listing every member would
-- make one break cost Redis O(N) bytes per party, O(N^2) in all. So the
-- outcome carries counts and the first few ids; `status` lists the rest.

-- At most this many ids are named of those who arrived, and of those
-- missing.
local ROSTER_IDS = 8
-- A missing id is found by looking each expected one up in the members:
-- at most this many lookups per break (about a millisecond of Redis), so
-- a huge --expect list whose missing ids sit at its end is counted, not
-- named.
local ROSTER_LOOKUPS = 1000

-- '<count>/<n> <verb>: a,b,c' with at most ROSTER_IDS ids (the earliest
-- lease deadlines first), then ' and K more'; with an --expect list (ids
-- comma-separated), '; missing: x,y' as far as ROSTER_LOOKUPS reach, and
-- the number of the rest.
local function roster(inkey, count, n, verb, expect)
  local ids = redis.call('ZRANGE', inkey, 0, ROSTER_IDS - 1)
  local text = count .. '/' .. n .. ' ' .. verb .. ': ' ..
               table.concat(ids, ',')
  if count > #ids then text = text .. ' and ' .. (count - #ids) .. ' more' end
  if not expect or expect == '' then return text end
  local miss, looked = {}, 0
  for e in string.gmatch(expect, '[^,]+') do
    if #miss == ROSTER_IDS or looked == ROSTER_LOOKUPS then break end
    looked = looked + 1
    if not redis.call('ZSCORE', inkey, e) then miss[#miss + 1] = e end
  end
  -- The list holds n ids and every member is on it (arrive refuses anyone
  -- else), so n minus the count is what is missing.
  local missing = math.max((tonumber(n) or 0) - count, #miss)
  text = text .. '; missing: ' .. table.concat(miss, ',')
  if missing > #miss then
    if #miss > 0 then text = text .. ' and ' end
    text = text .. (missing - #miss) .. (#miss > 0 and ' more' or ' ids')
  end
  return text
end
