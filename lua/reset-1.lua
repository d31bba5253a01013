-- reset: break the open round of a barrier with 'broken reset' and forget
-- its party count, so the next arrival starts a fresh round with any n.
--
-- Atomic so that no arrival can complete the round while it is being broken.
--
-- KEYS[1]  barrier base key, rb:{NAME}; per-round keys derived from it share
--          its hash tag.
-- ARGV[1]  linger of ended rounds in seconds
-- ARGV[2]  ttl of idle state in seconds
--
-- Returns {gen, members}: the generation that was broken and how many
-- parties were in it (0 when the barrier was idle or unknown).

local base = KEYS[1]
local linger, ttl = tonumber(ARGV[1]), tonumber(ARGV[2])
local gen = tonumber(redis.call('HGET', base, 'gen') or '0')
if gen == 0 then return {0, 0} end
local inkey = base .. ':' .. gen .. ':in'
local outkey = base .. ':' .. gen .. ':out'
local members = redis.call('ZCARD', inkey)
if not redis.call('LINDEX', outkey, 0) then
  redis.call('RPUSH', outkey, 'broken reset')
  redis.call('EXPIRE', outkey, linger)
end
redis.call('EXPIRE', inkey, linger)
redis.call('HSET', base, 'gen', gen + 1)
redis.call('HDEL', base, 'n')
redis.call('EXPIRE', base, ttl)
return {gen, members}
