-- The --expect list of a barrier's rounds, kept once (needs types.lua).
--
-- Parties send the digest of their list (ARGV of arrive) rather than the
-- list: a list of 100,000 ids is megabytes, which every party would resend
-- and every arrival search. The round's terms hold the digest, so agreeing
-- on it is one compare; the ids live in a set named by the digest, stored
-- when an arrival finds it missing (it answers 'needlist', and the party
-- stores the list with expect-store, in parts). Rounds with the same list
-- share the set.
--
-- The list goes in parts, so that no call holds the server for long: the
-- comma-separated ids in order, a part ending after its EXPECT_PART_IDS-th
-- id or before an id that would take its text past EXPECT_PART_BYTES. The
-- digest is the SHA1 of the parts' SHA1s (40 hex digits each, one after
-- the other), so each part is checked on its own.
--
-- rb:b:{NAME}:x:<digest>, a set of the ids; :x:<digest>:n, the set while
-- its parts come; :x:<digest>:p, a hash of the parts stored (index → 1);
-- :x:<digest>:f, the list's first EXPECT_HEAD ids in its order, comma-
-- separated: a break names the missing among them with a few lookups
-- that stay in the cache, where a sample of a set of 100,000 would not.

local EXPECT_PART_IDS = 1024
local EXPECT_PART_BYTES = 65536
-- 100,000 ids (RB_N_MAX) of up to 200 bytes: at most 97 parts end by their
-- count, 307 by their size (each over 65,336 bytes), and the last.
local EXPECT_PARTS_MAX = 405
local EXPECT_HEAD = 16

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

