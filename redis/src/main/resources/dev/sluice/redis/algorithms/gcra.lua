--[[
Sluice: GCRA, every operation on its state (Java twin: dev.sluice.spi.algorithm.Gcra). One theoretical
arrival time (tat), admitting what the token bucket of the same rate and burst admits: a request
of cost c fits while the units owed plus c * perToken stay within the capacity.

State: bucket.lua's binary string, its debt the units owed at the time written, so that
tat = time + debt / perMicro and rem = debt % perMicro. Returned slots: bucket.lua's.

Operations as token_bucket.lua states them, with:
  refund   the debt at now, less cost tokens, at least 0; written now, keeping the key's TTL
  pause    the debt of a full bucket at till; a schedule booked past it keeps what it has

A changed limit (same key, other units): the tokens owed when written carry over, clamped to the
new burst, and drain at the new rate, until the old debt would be paid (its key gone).

Invariants: 0 <= remaining <= burst; a clock behind the stored tat grants nothing; the key expires
when nothing is owed.
--]]

local bucket = use('bucket')
local read, same_units = bucket.read, bucket.same_units

local function decide(key, now, a, commit)
  local per_token, per_micro, cap = a.per_token, a.per_micro, a.capacity
  local need = a.cost * per_token
  local delay, r, gone = -1, 0, false
  local written, owed, old_per_token, old_per_micro, old_cap = read(key)
  if written then
    if not same_units(old_per_token, old_per_micro, old_cap, a) then
      -- written under other units: the tokens owed when written carry over, clamped to this
      -- burst, and drain at this rate, until the old debt would be paid (its key gone)
      gone = written + cdiv(owed, old_per_micro)
      if gone <= now then
        written, owed, gone = now - 1, 0, false
      else
        owed = bucket.converted_debt(owed, old_per_token, a)
      end
    end
    -- the theoretical arrival time: written + owed / perMicro, and the remainder rem
    local d = idiv(owed, per_micro)
    r = owed - d * per_micro
    delay = written + d - now
  end
  if delay < 0 then
    delay, r = 0, 0
  end
  local over = delay > idiv(cap, per_micro)
  local debt = cap + 1
  if not over then debt = delay * per_micro + r end
  local fits = (not over) and debt + need <= cap
  if fits and commit then
    debt = debt + need
    delay = idiv(debt, per_micro)
    r = debt - delay * per_micro
  end
  local reset = delay
  if r > 0 then reset = reset + 1 end
  local remaining = 0
  if not over then remaining = idiv(cap - debt, per_token) end
  if remaining < 0 then remaining = 0 end
  local retry = 0
  if not fits then retry = delay + cdiv(r + need - cap, per_micro) end
  -- debt must fall to cap - (remaining + 1) tokens; written as retry is, from delay and r
  local nxt = 0
  if over or debt ~= 0 then nxt = delay + cdiv(r + (remaining + 1) * per_token - cap, per_micro) end
  local batch = nil
  if not commit and not over then
    -- after m commits the debt is debt + m * need; the debt of the next token stays as far away
    batch = {0, debt, need, per_micro, 0, cdiv(debt + (remaining + 1) * per_token - cap, per_micro), 0, 0, 1, 0}
  end
  if fits and commit then
    bucket.write(key, now, debt, a, reset)
  else
    reset, retry, nxt = until_gone(gone, now, reset, retry, nxt)
  end
  -- a debt within the capacity may be spent now
  return fits, remaining, reset, retry, nxt, batch, 0
end

local function refund(key, now, a)
  local written, owed, per_token, per_micro, capacity = read(key)
  if not written or not same_units(per_token, per_micro, capacity, a) then return end
  local d = idiv(owed, a.per_micro)
  local tat, r = written + d, owed - d * a.per_micro
  if tat < now then return end
  local debt = (tat - now) * a.per_micro + r - a.cost * a.per_token
  if debt < 0 then debt = 0 end
  -- written now, keeping the key's TTL
  bucket.write(key, now, debt, a)
end

local function pause(key, now, a, till, slots)
  -- a slot given up before the pause's end must not be sent in it
  redis.call('DEL', slots)
  local tat, r = till + idiv(a.capacity, a.per_micro), a.capacity % a.per_micro
  local written, owed, per_token, per_micro, capacity = read(key)
  if written and same_units(per_token, per_micro, capacity, a) then
    local d = idiv(owed, a.per_micro)
    local at, rem = written + d, owed - d * a.per_micro
    if at > tat or (at == tat and rem >= r) then return end
  end
  local reset = tat - now
  if r > 0 then reset = reset + 1 end
  bucket.write(key, till, a.capacity, a, reset)
end

-- The state (time t0, units used) moved on to time x (slice.lua): the units owed at x
local function at_time(t0, used, x, a)
  if not t0 then return x, 0 end
  local d = idiv(used, a.per_micro)
  local delay = t0 + d - x
  if delay >= 0 then return x, delay * a.per_micro + (used - d * a.per_micro) end
  return x, 0
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
