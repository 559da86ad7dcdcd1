--[[
Sluice: a slice of a hot key's budget, spent here before an instance grants it locally, and the
unused rest of the previous slice given back, in one round trip (token bucket and gcra only).

KEYS[1]   the state of the limit, as decide.lua names it
ARGV[1]   the time in microseconds, or '' to read the Redis server's clock (TIME); production
          always sends ''
ARGV[2..8] the limit's seven values exactly as decide.lua reads them: algorithm (1 token-bucket,
          2 gcra), count, window, perToken, perMicro, capacity, cost (units of one request)
ARGV[9]   requests given back: what the instance took earlier and did not grant (0 for none)
ARGV[10]  requests wanted: the instance's own estimate of its next slice (0 to only give back)
ARGV[11]  the share: a slice is at most the whole requests the budget holds divided by this (at
          least 1 when one fits), so that a low budget is not stranded in one instance's slice

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
          or -2 (and six zeros) when the key holds a bucket written under other units (a limit
          changed by a deployment): the caller decides those requests with decide.lua, which
          converts the state; nothing was written

A give-back is a refund (refund.lua) of as many requests: it never gives more than an untouched
key would hold, so the fleet never admits more than one caller deciding alone would. The state is
read and written as decide.lua does (state.lua, sent in front of this script), with the TTL a
decision gives it.
--]]

-- idiv, cdiv, int, expire, numbers, second, same_units, read_state, write_state, clock,
-- read_limit: state.lua, sent in front of this script

local key = KEYS[1]
local now = clock()
local a = read_limit(2)
local give = tonumber(ARGV[9])
local want = tonumber(ARGV[10])
local share = tonumber(ARGV[11])
local per_token, per_micro, cap = a.per_token, a.per_micro, a.capacity
local need = a.cost * per_token

local stamp, debt, old_per_token, old_per_micro, old_cap = read_state(key)
if stamp and not same_units(old_per_token, old_per_micro, old_cap, a) then
  return {-2, 0, 0, 0, 0, 0, 0}
end

-- The state as units used (debt) at time t: for the token bucket capacity - level after refill
-- to t, for gcra the units owed at t (t is now; a bucket written ahead of now stays there)
local t = now
if a.algorithm == 1 then
  local l = cap
  if stamp then
    l = cap - debt
    if stamp > now then t = stamp end
    local missing = cap - l
    if missing > 0 then
      if t - stamp >= cdiv(missing, per_micro) then l = cap else l = l + (t - stamp) * per_micro end
    end
  end
  debt = cap - l
else
  local owed = 0
  if stamp then
    local d = idiv(debt, per_micro)
    local delay = stamp + d - now
    if delay >= 0 then owed = delay * per_micro + (debt - d * per_micro) end
  end
  debt = owed
end

-- the give-back: at least nothing used
debt = debt - give * need
if debt < 0 then debt = 0 end

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
if granted > 0 or give > 0 then
  write_state(key, t, debt, a, reset)
end
local l = cap - debt
local remaining = 0
if l > 0 then remaining = idiv(l, per_token) end
local retry = 0
if l < need then retry = skew + cdiv(need - l, per_micro) end
-- one token more than remaining (gcra owing more than its burst counts from none left)
local nxt = 0
if l < cap then nxt = skew + cdiv((remaining + 1) * per_token - l, per_micro) end
return {granted, remaining, reset, retry, nxt, debt, skew}
