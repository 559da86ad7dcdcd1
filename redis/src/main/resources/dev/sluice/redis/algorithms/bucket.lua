--[[
Sluice: what the token bucket and GCRA share (token_bucket.lua, gcra.lua): their stored state, its
conversion between units, and the slots given up inside their schedule.

Stored state (f: the fingerprint of the parameters it was written under)
  one binary string of 11 to 43 bytes (19 for 100 per hour): the time written, 7 bytes big-endian,
  then the MessagePack integers debt, perToken, perMicro, burst (the last three are f). debt is the
  units used at that time: capacity - level for the token bucket; for gcra the units owed, so
  tat = time + debt / perMicro and rem = debt % perMicro. A time below 2^53 starts with a byte below
  0x20: a string starting otherwise is in no format these scripts write and reads as absent; a key
  of another type fails the group (WRONGTYPE). Redis keeps a string of up to 44 bytes in one
  allocation with its header (embstr): 19 bytes take 48.
Returned slots
  the bucket's key followed by ':slots', one string
  '<perToken>,<perMicro>,<capacity>|<at>:<tokens>,<at>:<tokens>...': slots whose waiters gave them
  up while reservations were booked behind them (give_back), instants in microseconds ascending,
  at most most_slots, read and taken only by the reservation form (reserve.lua), expiring with the
  bucket's schedule (every slot kept lies inside it). The Java twin is ReturnedSlots in
  dev.sluice.spi.algorithm.

Invariant: a state is read (and decoded) once per call and key; a write forgets it, so that a read
after a write (the refused of a batch that admitted some) reads what was written.
--]]

-- Each key's state as this call read it, decoded: a group's read pass and its commit fetch and
-- decode a bucket once (one GET, one SET per decision)
local states = {}

-- A bucket's stored state, or nil: the time it was written, its debt then, and the per_token,
-- per_micro and capacity it was written under
local function read(key)
  local s = states[key]
  if not s then
    local v = redis.call('GET', key)
    if not v or string.byte(v, 1) >= 32 then
      s = {}
    else
      local debt, pt, pm, burst = cmsgpack.unpack(string.sub(v, 8))
      s = {struct.unpack('>I7', v), debt, pt, pm, pt * burst}
    end
    states[key] = s
  end
  return s[1], s[2], s[3], s[4], s[5]
end

-- Writes a bucket's state in the current format, expiring after ttl_us (a decision) or keeping
-- the key's TTL (a refund, when ttl_us is nil)
local function write(key, time, debt, a, ttl_us)
  states[key] = nil
  local value = struct.pack('>I7', time) .. cmsgpack.pack(debt, a.per_token, a.per_micro, a.burst)
  if not ttl_us then
    redis.call('SET', key, value, 'KEEPTTL')
    return
  end
  redis.call('SET', key, value, 'PX', ttl_ms(ttl_us))
end

-- Whether a bucket's state was written under this limit's units
local function same_units(per_token, per_micro, capacity, a)
  return per_token == a.per_token and per_micro == a.per_micro and capacity == a.capacity
end

-- A bucket's limit carries its burst: its units are in its state
local function prepare(a)
  a.burst = idiv(a.capacity, a.per_token)
end

-- The tokens a bucket written under other units had used, as units of this one: whole tokens,
-- rounded up, at most this burst
local function converted_debt(old_debt, old_per_token, a)
  local used = cdiv(old_debt, old_per_token)
  if used > a.burst then used = a.burst end
  return used * a.per_token
end

-- Where a reservation left the schedule: the theoretical arrival time and remainder
-- (time + debt / perMicro, debt % perMicro). The Java twin is Bucket.end in dev.sluice.spi.algorithm.
local function slot_end(key, a)
  local time, debt = read(key)
  local d = idiv(debt, a.per_micro)
  return time + d, debt - d * a.per_micro
end

local most_slots = 32

-- The slots returned at `key` under limit a's units, as a list of {at, tokens} (empty if none, or
-- written under other units)
local function read_slots(key, a)
  local s = redis.call('GET', key)
  local slots = {}
  if not s then return slots end
  local bar = string.find(s, '|', 1, true)
  if not bar or string.sub(s, 1, bar - 1) ~= int(a.per_token) .. ',' .. int(a.per_micro) .. ',' .. int(a.capacity) then
    return slots
  end
  for x, u in string.gmatch(string.sub(s, bar + 1), '(%d+):(%d+)') do
    slots[#slots + 1] = {tonumber(x), tonumber(u)}
  end
  return slots
end

-- Writes `slots` at `key` under limit a's units, without those before now, expiring at `till`,
-- where the bucket's schedule ends; deletes the key when none is left
local function write_slots(key, a, slots, now, till)
  local parts = {}
  for _, slot in ipairs(slots) do
    if slot[1] >= now and slot[2] > 0 then
      parts[#parts + 1] = int(slot[1]) .. ':' .. int(slot[2])
    end
  end
  if #parts == 0 then
    redis.call('DEL', key)
    return
  end
  local ms = cdiv(till - now, 1000)
  if ms < 1 then ms = 1 end
  redis.call('SET', key, int(a.per_token) .. ',' .. int(a.per_micro) .. ',' .. int(a.capacity) .. '|'
    .. table.concat(parts, ','), 'PX', int(ms))
end

-- Whether a schedule ending at (e, er) still holds `need` units from instant x on: a call there
-- keeps the limit's spacing from the schedule's next slot (Arithmetic.covers)
local function covers(e, er, x, need, per_micro)
  local span = e - x
  if span < 0 then return false end
  if span >= cdiv(need, per_micro) then return true end
  return span * per_micro + er >= need
end

-- The slots returned at `slots` from now on under limit a's units: {at, tokens}
local function returned(slots, a, now)
  local found = {}
  for _, slot in ipairs(read_slots(slots, a)) do
    if slot[1] >= now then found[#found + 1] = slot end
  end
  return found
end

-- Whether the schedule at `key` still holds limit a's cost from instant x on (a slot returned
-- there may be taken), under a's units
local function holds(key, a, x)
  local time, debt, per_token, per_micro, capacity = read(key)
  if not time or not same_units(per_token, per_micro, capacity, a) then return false end
  local d = idiv(debt, a.per_micro)
  return covers(time + d, debt - d * a.per_micro, x, a.cost * a.per_token, a.per_micro)
end

-- Takes limit a's cost from the slot returned at `at`: the schedule granted its units already
local function take(slots, key, a, at, now)
  local kept = read_slots(slots, a)
  for _, s in ipairs(kept) do
    if s[1] == at then s[2] = s[2] - a.cost end
  end
  local e = slot_end(key, a)
  write_slots(slots, a, kept, now, e + 1)
end

-- Keeps cost tokens at slot among the returned slots at `slots`, expiring with the schedule,
-- which ends at `till`
local function return_slot(slots, a, slot, till, now)
  local kept = returned(slots, a, now)
  local at = #kept + 1
  for j, s in ipairs(kept) do
    if s[1] == slot then
      s[2] = s[2] + a.cost
      write_slots(slots, a, kept, now, till)
      return
    end
    if s[1] > slot then
      at = j
      break
    end
  end
  table.insert(kept, at, {slot, a.cost})
  if #kept > most_slots then kept[#kept] = nil end
  write_slots(slots, a, kept, now, till)
end

-- Gives back a reservation that left the schedule at (e, er) for the slot `slot`: while the stored
-- schedule still ends there (nothing reserved, decided or paused into it since), the end moves
-- back by the cost: the time by its whole microseconds, the debt by the rest (borrowing one
-- microsecond if it must), and the next request gets the slot. Otherwise the requests behind it
-- were placed after it, and moving the end back would put two calls in one slot: the slot is kept
-- among the returned slots while it is ahead of now and the schedule still holds it. Keeps the
-- state key's TTL. The Java twin is Bucket's give-back in dev.sluice.spi.algorithm.
local function give_back(key, a, e, er, slot, slots, now)
  local time, debt, per_token, per_micro, capacity = read(key)
  if not time or not same_units(per_token, per_micro, capacity, a) then return end
  local d = idiv(debt, a.per_micro)
  local end_at, end_rem = time + d, debt - d * a.per_micro
  if end_at == e and end_rem == er then
    local need = a.cost * a.per_token
    local q = idiv(need, a.per_micro)
    local t = time - q
    local left = debt - (need - q * a.per_micro)
    if left < 0 then
      t, left = t - 1, left + a.per_micro
    end
    if left <= a.capacity then
      write(key, t, left, a)
      return
    end
  end
  if slot >= now and covers(end_at, end_rem, slot, a.cost * a.per_token, a.per_micro) then
    return_slot(slots, a, slot, end_at + 1, now)
  end
end

return {
  read = read,
  write = write,
  same_units = same_units,
  prepare = prepare,
  converted_debt = converted_debt,
  slot_end = slot_end,
  returned = returned,
  holds = holds,
  take = take,
  give_back = give_back,
}
