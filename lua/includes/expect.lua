-- The --expect list of a barrier's rounds, kept once (needs types.lua).
--
-- Parties send the SHA1 of their list (ARGV of arrive) rather than the list:
-- a list of 100,000 ids is megabytes, which every party would resend and
-- every arrival search. The round's terms hold the digest, so agreeing on
-- it is one compare; the ids live in a set named by the digest, stored by
-- the first arrival that finds it missing (it answers 'needlist', and the
-- party sends the list once). Rounds with the same list share the set.
--
-- rb:b:{NAME}:x:<sha1 hex of the comma-separated list>, a set of the ids.

-- The most bytes a list may have: 100,000 ids of up to 200 bytes, and
-- their commas.
local EXPECT_BYTES_MAX = 100000 * 201

local function expect_key(base, digest)
  return base .. ':x:' .. digest
end

-- ARGV[i] as a digest: '' (no list) or 40 lowercase hex digits.
local function digest_arg(i)
  local s = ARGV[i]
  if type(s) ~= 'string' or
     (s ~= '' and (#s ~= 40 or string.find(s, '[^0-9a-f]'))) then
    bad_arg(i, 'expected ids digest')
  end
  return s
end

-- ARGV[i], when given, as the list whose digest is digest.
local function list_arg(i, digest)
  local s = ARGV[i]
  if s == nil then return nil end
  if digest == '' or #s == 0 or #s > EXPECT_BYTES_MAX or
     string.find(s, '[%z\1-\32\127{}]') or redis.sha1hex(s) ~= digest then
    bad_arg(i, 'expected ids')
  end
  return s
end

-- Store list in key (a set) unless it is there, and let it live keep
-- seconds. SADD by the thousand: Lua's unpack has a stack limit.
local function store_expect(key, list, keep)
  want_type(key, 'set')
  if redis.call('EXISTS', key) == 0 then
    local batch = {}
    for e in string.gmatch(list, '[^,]+') do
      batch[#batch + 1] = e
      if #batch == 1000 then
        redis.call('SADD', key, unpack(batch))
        batch = {}
      end
    end
    if #batch > 0 then redis.call('SADD', key, unpack(batch)) end
  end
  redis.call('EXPIRE', key, keep)
end
