--[[
Sluice: a slice of a hot key's budget, spent here before an instance grants it locally, and the
unused rest of the previous slice given back, in one round trip (token bucket and gcra only).

KEYS[1]   the state of the limit, as decide.lua names it
ARGV[1]   the time in microseconds, or '' to read the Redis server's clock (TIME); production
          always sends ''
ARGV[2..8] the limit's seven values exactly as decide.lua reads them: algorithm (token-bucket's
          or gcra's id), count, window, perToken, perMicro, capacity, cost (units of one request)
ARGV[9]   requests given back: what the instance took earlier and did not grant (0 for none)
ARGV[10]  requests wanted: the instance's own estimate of its next slice (0 to only give back)
ARGV[11]  the share: a slice is at most the whole requests the budget holds divided by this (at
          least 1 when one fits), so that a low budget is not stranded in one instance's slice
ARGV[12]  when the instance granted the last request of its slice, on this script's clock (at
          most now), or '' for now: the give-back applies as of then, and without a new slice the
          state is written as of then (even with nothing given back), as decide.lua would have
          left it at that request, whatever limits read it next
ARGV[13]  units charged back as of then: the refill the bucket would have lost to the full while
          the slice was out (decide.lua caps the level, a bucket still counting a slice does not)

Returns   granted, remaining, reset_us, retry_us, next_us
            granted    requests spent here now, each of cost units: the instance grants them
            remaining  whole tokens left after the slice
            reset_us   until the budget is whole again, as decide.lua answers it
            retry_us   until one more request (of cost) fits, 0 if it does now
            next_us    until one token more than remaining is there
            debt       the units used after the slice (the whole slice counted), from which
                       the instance answers its local grants as decide.lua would
            skew       how far the bucket's time is ahead of now (a token bucket written
                       ahead by a clock that went back), microseconds
            now        this script's time, microseconds
          or -2 (and seven zeros) when the key holds a bucket written under other units (a limit
          changed by a deployment): the caller decides those requests with decide.lua, which
          converts the state; nothing was written

A give-back is a refund (refund.lua) of as many requests as of the last grant: it never gives
more than an untouched key would hold, so the fleet never admits more than one caller deciding
alone would. Given back alone, the state is written as of that grant: decide.lua converts a state
written under other units from its time, so a state moved on to now would convert otherwise. The state is
read and written by the module decide.lua uses (algorithms/bucket.lua, sent in front of this
script), with the TTL a decision gives it.
--]]

-- shared.lua and the algorithms' modules are sent in front of this script (LuaScript composes
-- them): idiv, cdiv, clock, read_limit, use, the bucket's at_time

local bucket = use('bucket')

local key = KEYS[1]
local now = clock()
local a = read_limit(2)
local give = tonumber(ARGV[9])
local want = tonumber(ARGV[10])
local share = tonumber(ARGV[11])
local per_token, per_micro, cap = a.per_token, a.per_micro, a.capacity
local need = a.cost * per_token

local at = now
if ARGV[12] and ARGV[12] ~= '' then
  at = tonumber(ARGV[12])
  if at > now then at = now end
end

local stamp, debt, old_per_token, old_per_micro, old_cap = bucket.read(key)
if stamp and not bucket.same_units(old_per_token, old_per_micro, old_cap, a) then
  return {-2, 0, 0, 0, 0, 0, 0, 0}
end

-- The state (time t, units used) moved on to time x: the algorithm's at_time
local function at_time(t0, used, x)
  return a.run.at_time(t0, used, x, a)
end

-- the give-back, as of the last grant (or the state's own time, when written later): at least
-- nothing used
local t = at
if stamp and stamp > at then t = stamp end
t, debt = at_time(stamp, debt, t)
debt = debt - give * need
if debt < 0 then debt = 0 end
-- the refill lost to the full, charged back (at most to an empty bucket; gcra may owe more,
-- reserved ahead, which stays)
local charged = debt + (tonumber(ARGV[13]) or 0)
if charged > cap then charged = cap end
if charged > debt then debt = charged end
local given_at, given_debt = t, debt

-- then on to now
t, debt = at_time(t, debt, now)

-- the slice: what was wanted, at most the budget's share (at least one request when one fits)
local room = cap - debt
local whole = 0
if room > 0 then whole = idiv(room, need) end
local granted = want
local bound = idiv(whole, share)
if bound < 1 and whole >= 1 then bound = 1 end
if granted > bound then granted = bound end
if granted < 0 then granted = 0 end
debt = debt + granted * need

local skew = t - now
local reset = skew + cdiv(debt, per_micro)
if granted > 0 then
  bucket.write(key, t, debt, a, reset)
elseif stamp and (give > 0 or ARGV[12] ~= '') then
  -- as decide.lua left it at the last grant, expiring when that state would be whole again
  local ttl = given_at - now + cdiv(given_debt, per_micro)
  if ttl < 0 then ttl = 0 end
  bucket.write(key, given_at, given_debt, a, ttl)
end
local l = cap - debt
local remaining = 0
if l > 0 then remaining = idiv(l, per_token) end
local retry = 0
if l < need then retry = skew + cdiv(need - l, per_micro) end
-- one token more than remaining (gcra owing more than its burst counts from none left)
local nxt = 0
if l < cap then nxt = skew + cdiv((remaining + 1) * per_token - l, per_micro) end
return {granted, remaining, reset, retry, nxt, debt, skew, now}
