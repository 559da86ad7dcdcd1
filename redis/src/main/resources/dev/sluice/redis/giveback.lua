--[[
Sluice: return a reservation whose waiter gave up before sending (RateLimiter.acquire interrupted,
acquireAsync's stage cancelled or timed out), under one or more limits, atomically, in one round
trip (RateLimitStore.giveBack). reserve.lua told where it left each limit's
schedule and the reserved instant; each limit is then given back on its own, only where that
hands no call a slot it shares with another.

KEYS[i]       state of limit i, as decide.lua names it (one hash tag: the caller), i from 1 to n
KEYS[n + i]   limit i's returned slots: its key followed by ':slots' (see algorithms/bucket.lua)
ARGV[1]       the time in microseconds, or '' to read the Redis server's clock (TIME); production
              always sends ''
ARGV[2..]     ten values per limit i, at 2 + 10 * (i - 1): the seven decide.lua reads (algorithm,
              count, window, perToken, perMicro, capacity, cost), then end, end_rem and slot,
              as reserve.lua answered them: where the reservation left the
              limit's schedule (end_rem -1: it took a returned slot) and the reserved instant

Returns   1

Each algorithm's give_back (its file in algorithms/) says what it gives back: a bucket moves its
schedule's end back, or keeps the slot among its returned slots; a window or a log takes the cost
off the reservation's window or entries.
Nothing happens to an absent key, to a bucket written under other units, or to a window or log
written under another period. Writes keep the state key's TTL (SET KEEPTTL, HSET, LTRIM, LSET): a
give-back only brings the state's equality with an absent key sooner; the returned slots expire
with the schedule (one microsecond after its end). The Java twins are the algorithms' give-backs
in dev.sluice.spi.algorithm.
--]]

-- shared.lua and the algorithms' modules are sent in front of this script (LuaScript composes
-- them): clock, read_limit, each limit's run.give_back

local now = clock()

-- every limit is read before any key is written: a bad id gives back nothing
local n = #KEYS / 2
local limits = {}
for i = 1, n do
  local base = 2 + 10 * (i - 1)
  local a = read_limit(base)
  a.e, a.er, a.slot = tonumber(ARGV[base + 7]), tonumber(ARGV[base + 8]), tonumber(ARGV[base + 9])
  limits[i] = a
end
for i = 1, n do
  local a = limits[i]
  a.run.give_back(KEYS[i], a, a.e, a.er, a.slot, KEYS[n + i], now)
end
return 1
