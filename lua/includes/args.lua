-- ARGV checks, run before a script's first write: a bad argument is an
-- error reply and nothing is written.
local function bad_arg(i, what)
  error({err = 'ERR bad argument ' .. i .. ' (' .. what .. ')'})
end

-- ARGV[i] as an integer in [lo, hi]: decimal digits only, no sign, no
-- blanks, no exponent (what tonumber alone would take).
local function int_arg(i, what, lo, hi)
  local s = ARGV[i]
  if type(s) ~= 'string' or not string.match(s, '^%d+$') or #s > 15 then
    bad_arg(i, what)
  end
  local v = tonumber(s)
  if v < lo or v > hi then bad_arg(i, what) end
  return v
end

-- ARGV[i] as a word: 1..200 bytes, no whitespace or control bytes, no
-- braces; commas only where allow_comma (ids are listed comma-separated).
local function word_arg(i, what, allow_comma)
  local s = ARGV[i]
  if type(s) ~= 'string' or #s == 0 or #s > 200 or
     string.find(s, '[%z\1-\32\127{}]') or
     (not allow_comma and string.find(s, ',', 1, true)) then
    bad_arg(i, what)
  end
  return s
end
