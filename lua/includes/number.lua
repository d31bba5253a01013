-- Decimal numbers as rbarrier's parameters hold them (lib/rb_check.c's
-- rb_check_number is the C half): an integer is -?(0|[1-9][0-9]*) within
-- 64 bits, a float the same with a fraction .[0-9]+. Nothing here converts
-- a value to a Lua number: a double's tostring would print 1e+14.

-- 1 when s is an integer in canonical form (INCRBY's exact domain; Redis
-- itself refuses one past 64 bits, and that refusal reaches the caller).
local function is_int_text(s)
  return type(s) == 'string' and s ~= '-0' and
         (string.match(s, '^%-?[1-9]%d*$') ~= nil or s == '0')
end

-- ARGV[i] as a decimal number, integer or with a fraction, at most 40
-- bytes; returns it (text) and whether it has a fraction.
local function dec_arg(i, what)
  local s = ARGV[i]
  if type(s) ~= 'string' or #s > 40 then bad_arg(i, what) end
  if is_int_text(s) then return s, false end
  if string.match(s, '^%-?[1-9]%d*%.%d+$') or
     string.match(s, '^%-?0%.%d+$') then
    return s, true
  end
  bad_arg(i, what)
end
