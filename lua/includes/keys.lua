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

