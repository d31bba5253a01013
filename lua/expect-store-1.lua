-- expect-store: store one part of an --expect list (includes/expect.lua),
-- after an arrival answered 'needlist'. A list of 100,000 ids stored in
-- one call would hold the server for tens of milliseconds; a part (at
-- most 1,024 ids and 64 KiB) holds it for about a millisecond.
--
-- Parties that store the same list at once share the work: each call
-- answers the first part still missing, which the caller sends next. The
-- parts fill the set rb:b:{NAME}:x:<digest>:n, and the hash
-- rb:b:{NAME}:x:<digest>:p names the parts stored; the last part renames
-- the set to rb:b:{NAME}:x:<digest>, the one arrivals read, so an arrival
-- never sees a list in part. Part 1 also keeps the list's first ids
-- (:x:<digest>:f), which a break names.
--
-- Atomic because the part's record, the set and the rename must agree: two
-- callers storing the last two parts at once must not both find the list
-- incomplete, nor rename it twice.
--
-- KEYS[1]  barrier base key, rb:b:{NAME} (the list's keys are derived from
--          it: same {NAME} tag, same slot)
-- ARGV[1]  the list's digest: the SHA1 of ARGV[3] (40 lowercase hex
--          digits)
-- ARGV[2]  the part's index (1..P)
-- ARGV[3]  the parts' SHA1s, 40 lowercase hex digits each, in order
--          (P of them, 1..405)
-- ARGV[4]  the part: its ids, comma-separated (1..1,024 ids of 1..200
--          bytes, no whitespace, control bytes or braces; at most 65,536
--          bytes), whose SHA1 is the part's in ARGV[3]
-- ARGV[5]  ttl of idle state in seconds (integer >= 1)
-- ARGV[6]  lease in milliseconds (integer >= 1)
--
-- Returns one of
--   {'stored'}   the list's set is whole (now, or it was before)
--   {'part', j}  this part is stored (now or before); part j (1..P) is the
--                first one still missing

--- @include "includes/args.lua"
--- @include "includes/time.lua"
--- @include "includes/keys.lua"
--- @include "includes/round.lua"
--- @include "includes/types.lua"
--- @include "includes/expect.lua"

local base = KEYS[1]
local digest = digest_arg(1)
if digest == '' then bad_arg(1, 'expected ids digest') end
local sums = ARGV[3]
if type(sums) ~= 'string' or #sums == 0 or #sums % 40 ~= 0 or
   #sums > 40 * EXPECT_PARTS_MAX or string.find(sums, '[^0-9a-f]') or
   redis.sha1hex(sums) ~= digest then
  bad_arg(3, 'parts digests')
end
local parts = #sums / 40
local i = int_arg(2, 'part index', 1, parts)
local part = ARGV[4]
if type(part) ~= 'string' or #part == 0 or
   #part > EXPECT_PART_BYTES or
   string.find(part, '[%z\1-\32\127{}]') or
   redis.sha1hex(part) ~= string.sub(sums, 40 * i - 39, 40 * i) then
  bad_arg(4, 'expected ids part')
end
local ids = {}
for e in string.gmatch(part, '[^,]+') do
  if #e > 200 or #ids == EXPECT_PART_IDS then bad_arg(4, 'expected ids part') end
  ids[#ids + 1] = e
end
if #ids == 0 then bad_arg(4, 'expected ids part') end
local ttl = int_arg(5, 'ttl', 1, 1e9)
local lease = int_arg(6, 'lease', 1, 1e12)
local keep = open_expiry(ttl, lease)

local xkey = expect_key(base, digest)
local fill, done, head = xkey .. ':n', xkey .. ':p', xkey .. ':f'
want_type(xkey, 'set')
want_type(head, 'string')
if redis.call('EXISTS', xkey) == 1 then
  redis.call('EXPIRE', xkey, keep)
  redis.call('EXPIRE', head, keep)
  return {'stored'}
end
want_type(fill, 'set')
want_type(done, 'hash')
-- The two expire together, but a server may drop one before the other: a
-- record of parts whose set is gone records nothing (tests/model/expect.pml,
-- MUT_XS_KEEP_RECORD).
if redis.call('EXISTS', fill) == 0 then redis.call('DEL', done) end
if i == 1 then
  redis.call('SET', head, table.concat(ids, ',', 1,
                                       math.min(#ids, EXPECT_HEAD)),
             'EX', keep)
end
if not redis.call('HGET', done, i) then
  -- SADD by the thousand: Lua's unpack has a stack limit.
  for from = 1, #ids, 1000 do
    redis.call('SADD', fill, unpack(ids, from, math.min(from + 999, #ids)))
  end
  redis.call('HSET', done, i, 1)
end
local fields = {}
for k = 1, parts do fields[k] = k end
local have = redis.call('HMGET', done, unpack(fields))
for k = 1, parts do
  if not have[k] then
    redis.call('EXPIRE', fill, keep)
    redis.call('EXPIRE', done, keep)
    return {'part', k}
  end
end
redis.call('RENAME', fill, xkey)
redis.call('DEL', done)
redis.call('EXPIRE', xkey, keep)
redis.call('EXPIRE', head, keep)
return {'stored'}
