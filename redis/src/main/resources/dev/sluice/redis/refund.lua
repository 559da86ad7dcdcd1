--[[
Sluice: give back what one allowed request spent under one or more limits, atomically, in one
round trip (charge=after: a request charged up front whose response turned out not to count).

KEYS[i]   state of limit i, as decide.lua names it (one hash tag: the caller)
ARGV[1]   the time in microseconds, or '' to read the Redis server's clock (TIME); production
          always sends ''
ARGV[2..] seven values per limit i, at 2 + 7 * (i - 1), exactly as decide.lua reads them:
          algorithm, count, window, perToken, perMicro, capacity, cost

Returns   1

A refund never gives more than an untouched caller has, and never creates a key: each algorithm's
refund (its file in algorithms/) says what it gives back.
Nothing happens to an absent key, to a bucket written under other units, or to a window or log
written under another period: that state counts differently, and a redeploy forgives nothing.
Stored state is read and written by the same modules as decide.lua's, sent in front of both.
Writes keep the key's TTL (SET KEEPTTL, HSET, LTRIM, LSET): a refund only brings the state's
equality with an absent key sooner. The Java twins are the algorithms' refunds in dev.sluice.spi.algorithm.
--]]

-- shared.lua and the algorithms' modules are sent in front of this script (LuaScript composes
-- them): clock, read_limit, each limit's run.refund

local now = clock()

-- every limit is read before any key is written: a bad id refunds nothing
local limits = {}
for i = 1, #KEYS do
  limits[i] = read_limit(2 + 7 * (i - 1))
end
for i = 1, #KEYS do
  limits[i].run.refund(KEYS[i], now, limits[i])
end
return 1
