-- The arrival of the floor (bench/floor.c) and of the redis-py peer
-- (bench/pybarrier.py): the leanest correct barrier over Redis. Each round
-- has keys of its own (the parties count rounds in step), so a fast party
-- entering round r+1 can never lap a slow one still in round r, and no
-- generation needs to be read. The arrival that completes the round pushes
-- one token per waiter and learns the outcome from this reply; each waiter
-- pops one token, so both keys are gone when the round is.
-- KEYS[1] the round's count, KEYS[2] its release list; ARGV[1] n.
local c = redis.call('INCR', KEYS[1])
local n = tonumber(ARGV[1])
if c == n then
  redis.call('DEL', KEYS[1])
  if n > 1 then
    local t = {}
    for i = 1, n - 1 do t[i] = 'ok' end
    redis.call('RPUSH', KEYS[2], unpack(t))
  end
end
return c
