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
