--[[
The floor: the least a Redisson-based token bucket can do per decision. Not Sluice; a yardstick.

KEYS[1]   the bucket: a hash {t = last refill, microseconds; l = tokens, a float}
ARGV[1]   refill rate, tokens per second
ARGV[2]   capacity, tokens
ARGV[3]   TTL of the key, milliseconds

Returns   1 if one token was taken, 0 if not.

It reads the server clock (as Sluice does), refills, takes one token, and writes the state back
with a TTL, whether or not it admitted: no multi-limit, no remaining/reset/retry-after in the
answer, no guard against a clock that moved backwards, floating-point tokens.
--]]
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local rate = tonumber(ARGV[1])
local capacity = tonumber(ARGV[2])
local tokens = capacity
local s = redis.call('HMGET', KEYS[1], 't', 'l')
if s[1] then
  tokens = math.min(capacity, tonumber(s[2]) + (now - tonumber(s[1])) * rate / 1000000)
end
local allowed = 0
if tokens >= 1 then
  tokens = tokens - 1
  allowed = 1
end
redis.call('HSET', KEYS[1], 't', string.format('%.0f', now), 'l', string.format('%.6f', tokens))
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return allowed
