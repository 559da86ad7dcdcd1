--[[
Sluice: the token bucket, every operation on its state (Java twin: dev.sluice.spi.algorithm.TokenBucket).
Capacity burst tokens, refilled at the limit's rate, lazily: the level after refill is computed at
each read. Units are fixed-point (dev.sluice.internal.Units): perToken units a token, perMicro
units refilled a microsecond, capacity = burst * perToken.

State: bucket.lua's binary string, its debt capacity - level at the time written. Returned slots:
bucket.lua's.

The operations every algorithm module answers (shared.lua lists them):
  decide(key, now, a, commit) -> fits, remaining, reset, retry, next, batch, from
      remaining, reset, retry and next as decide.lua answers them, microseconds from now; batch the
      ten values a..e of reset and next after m admissions (decide.lua's reply); from: until the
      slot the request counts in begins, when later than now (a bucket written ahead, a window
      booked ahead): a reservation must not start before it. Writes only when commit is true and
      the request fits.
  refund(key, now, a)   the level refilled to now, plus cost tokens, at most the capacity; keeps
      the key's TTL
  pause(key, now, a, till, slots)   empty at till, refilling from there; a bucket booked past
      till keeps the lower of both; the returned slots are dropped
  give_back, slot_end, returned, holds, take: bucket.lua's

A changed limit (same key, other units): the whole tokens used when written (rounded up), at most
the new burst, refill at the new rate from the time written, until the old bucket would be full
(its key gone).

Invariants: 0 <= remaining <= burst; the stored time never moves backwards (a clock behind it
grants nothing: the level counts from the stored time); the key expires when the bucket is full.
--]]

local bucket = use('bucket')
local read, same_units = bucket.read, bucket.same_units

-- A bucket's level after elapsed microseconds of refill
local function refill(l, cap, per_micro, elapsed)
  local missing = cap - l
  if missing > 0 then
    if elapsed >= cdiv(missing, per_micro) then return cap end
    return l + elapsed * per_micro
  end
  return l
end

local function decide(key, now, a, commit)
  local per_token, per_micro, cap = a.per_token, a.per_micro, a.capacity
  local t, l, gone = now, cap, false
  local ts, debt, old_per_token, old_per_micro, old_cap = read(key)
  if ts then
    l = cap - debt
    if ts > now then t = ts end
    if not same_units(old_per_token, old_per_micro, old_cap, a) then
      -- written under other units: the tokens used at ts carry over, clamped to this burst, and
      -- refill at this rate, until the old bucket would be full (its key gone)
      gone = ts + cdiv(debt, old_per_micro)
      if gone <= now then
        l, gone = cap, false
      else
        l = cap - bucket.converted_debt(debt, old_per_token, a)
      end
    end
    l = refill(l, cap, per_micro, t - ts)
  end
  local need = a.cost * per_token
  local fits = l >= need
  if fits and commit then
    l = l - need
  end
  local skew = t - now
  local reset = skew + cdiv(cap - l, per_micro)
  local retry = 0
  if not fits then retry = skew + cdiv(need - l, per_micro) end
  -- the next whole token: (l / per_token + 1) tokens, reached by refilling from l
  local nxt = 0
  if l < cap then nxt = skew + cdiv((idiv(l, per_token) + 1) * per_token - l, per_micro) end
  local batch = nil
  if fits and commit then
    bucket.write(key, t, cap - l, a, reset)
  else
    reset, retry, nxt = until_gone(gone, now, reset, retry, nxt)
    -- after m commits the level is l - m * need; the next token stays as far away
    batch = {skew, cap - l, need, per_micro, 0,
             skew + cdiv((idiv(l, per_token) + 1) * per_token - l, per_micro), 0, 0, 1, 0}
  end
  return fits, idiv(l, per_token), reset, retry, nxt, batch, skew
end

local function refund(key, now, a)
  local ts, debt, per_token, per_micro, capacity = read(key)
  if not ts or not same_units(per_token, per_micro, capacity, a) then return end
  local t = now
  if ts > now then t = ts end
  local l = refill(a.capacity - debt, a.capacity, a.per_micro, t - ts) + a.cost * a.per_token
  if l > a.capacity then l = a.capacity end
  bucket.write(key, t, a.capacity - l, a)
end

local function pause(key, now, a, till, slots)
  local ts, debt, per_token, per_micro, capacity = read(key)
  local t, l = till, 0
  if ts then
    if ts > till then t = ts end
    if ts > till and same_units(per_token, per_micro, capacity, a) then
      -- booked past the pause's end: the lower of the two buckets at ts
      l = a.capacity - debt
      if cdiv(l, a.per_micro) > ts - till then l = (ts - till) * a.per_micro end
    end
  end
  bucket.write(key, t, a.capacity - l, a, t - now + cdiv(a.capacity - l, a.per_micro))
  -- a slot given up before the pause's end must not be sent in it
  redis.call('DEL', slots)
end

-- The state (time t0, units used) moved on to time x (slice.lua): capacity - level after refill to
-- x; a bucket written after x stays at its own time
local function at_time(t0, used, x, a)
  if not t0 then return x, 0 end
  local t = x
  if t0 > x then t = t0 end
  if used > 0 and t - t0 >= cdiv(used, a.per_micro) then return t, 0 end
  if used > 0 then return t, used - (t - t0) * a.per_micro end
  return t, used
end

return {
  prepare = bucket.prepare,
  give_back = bucket.give_back,
  slot_end = bucket.slot_end,
  returned = bucket.returned,
  holds = bucket.holds,
  take = bucket.take,
  decide = decide,
  refund = refund,
  pause = pause,
  at_time = at_time,
}
