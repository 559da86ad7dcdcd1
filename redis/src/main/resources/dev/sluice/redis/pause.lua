--[[
Sluice: hold a caller's budget under one or more limits spent until a provider's pause ends, for
every instance sharing this Redis, atomically, in one round trip (RateLimitStore.pause).

KEYS[i]   state of limit i, as decide.lua names it (one hash tag: the caller), i from 1 to n
KEYS[n+i] limit i's returned slots (its key followed by ':slots', see algorithms/bucket.lua): a bucket's are
          deleted
ARGV[1]   the time in microseconds, or '' to read the Redis server's clock (TIME); production
          always sends ''
ARGV[2]   the pause in microseconds, at least 1: it ends at now + pause
ARGV[3..] seven values per limit i, at 3 + 7 * (i - 1), exactly as decide.lua reads them

Returns   1

From the end on the budget comes back at the limit's own pace, never all at once: each
algorithm's pause (its file in algorithms/) says how.
A pause never grants: state spent further ahead (reservations booked past the end) keeps what it
has, taking the lower of both where they overlap. State written under other units or another
window is replaced. Each key written expires when it equals an absent key. The Java twins are
the algorithms' pauses in dev.sluice.spi.algorithm.
--]]

-- shared.lua and the algorithms' modules are sent in front of this script (LuaScript composes
-- them): clock, read_limit, each limit's run.pause

local now = clock()
local till = now + tonumber(ARGV[2])

-- every limit is read before any key is written: a bad id pauses nothing
local n = #KEYS / 2
local limits = {}
for i = 1, n do
  limits[i] = read_limit(3 + 7 * (i - 1))
end
for i = 1, n do
  limits[i].run.pause(KEYS[i], now, limits[i], till, KEYS[n + i])
end
return 1
