-- A round's keys, derived from the barrier's base key rb:b:{NAME} exactly
-- as lib/rb_keys.c derives them: rb:b:{NAME}:<gen>:in, :out, :val, :run.
-- They share the base key's {NAME} hash tag, so one cluster slot.
local function round_key(base, gen, part)
  return base .. ':' .. gen .. ':' .. part
end

-- A hostile or buggy caller must not make a script write to keys of
-- another round than the one its ARGV names.
local function check_round_keys(base, gen, inkey, outkey)
  if inkey ~= round_key(base, gen, 'in') or
     outkey ~= round_key(base, gen, 'out') then
    error({err = 'ERR round keys do not match the barrier and gen'})
  end
end

-- A job's keys, under its base key <prefix>:j:{JOB} (lib/rb_keys.c's
-- rb_key__job): <base>:<epoch>:<part>, or with an attempt
-- <base>:<epoch>:<att>:<part>. One tag, so one slot.
local function job_key(base, epoch, att, part)
  if att == nil then return base .. ':' .. epoch .. ':' .. part end
  return base .. ':' .. epoch .. ':' .. att .. ':' .. part
end

-- A lock's keys, derived from its base key rb:l:{NAME} exactly as
-- lib/rb_keys.c's rb_key__lock_part derives them: rb:l:{NAME}:<part>. One
-- {NAME} tag, so one cluster slot for every key of the lock, the
-- per-waiter wake lists (part 'wake:<id>') included.
local function lock_key(base, part)
  return base .. ':' .. part
end

-- A name's history, derived from any base key of the name exactly as
-- lib/rb_keys.c's rb_key__history derives it: <prefix>:h:{TAG} (a stream;
-- ':n' its counters; lua/includes/history.lua),
-- under the base key's tag, so one slot. Also returns what follows the tag
-- in the base key ('' for a plain name; ':<epoch>:<att>:NAME' for a
-- barrier inside a job, whose events go to the job's history).
local function history_key(base)
  local prefix, tag, rest = string.match(base, '^([^{]*):%a:{([^}]*)}(.*)$')
  return prefix .. ':h:{' .. tag .. '}', rest
end
