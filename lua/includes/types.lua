-- Refuse a key holding another type than the protocol gives it (left by an
-- older key layout, or written by hand) before the script's first write:
-- the reply names the key, and nothing is overwritten. The WRONGTYPE
-- prefix is Redis' own for this error, so clients classify it as one.
local function want_type(key, want)
  local t = redis.call('TYPE', key)['ok']
  if t ~= 'none' and t ~= want then
    error({err = 'WRONGTYPE ' .. key .. ' holds a ' .. t .. ', not a ' ..
                 want .. ' (not written by rbarrier?); nothing was written'})
  end
end

-- The same refusal at no cost on the way that succeeds: run a command that
-- reads key (or is the script's first write to it) and turn Redis' own
-- WRONGTYPE into want_type's error. Checking every key with TYPE up front
-- cost a command per key per call. Only for a command that writes nothing
-- when it fails, run before any other write the refusal must prevent.
local function typed(key, want, ...)
  local r = redis.pcall(...)
  if type(r) == 'table' and r.err then
    if string.sub(r.err, 1, 9) == 'WRONGTYPE' then want_type(key, want) end
    error(r)
  end
  return r
end
