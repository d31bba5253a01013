-- The server's clock in milliseconds (lease deadlines are on it, so every
-- party's lease is judged by one clock, whatever the clients' clocks say).
local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
