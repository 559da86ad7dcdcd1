--[[
Sluice: return a reservation whose waiter gave up before sending (RateLimiter.acquire interrupted,
acquireAsync's stage cancelled or timed out), under one or more limits, atomically, in one round
trip (RateLimitStore.giveBack). decide.lua's reservation form told where it left each limit's
schedule and the reserved instant; each limit is then given back on its own, only where that
hands no call a slot it shares with another.

KEYS[i]       state of limit i, as decide.lua names it (one hash tag: the caller), i from 1 to n
KEYS[n + i]   limit i's returned slots: its key followed by ':slots' (see state.lua)
ARGV[1]       the time in microseconds, or '' to read the Redis server's clock (TIME); production
              always sends ''
ARGV[2..]     ten values per limit i, at 2 + 10 * (i - 1): the seven decide.lua reads (algorithm,
              count, window, perToken, perMicro, capacity, cost), then end, end_rem and slot,
              as decide.lua's reservation form answered them: where the reservation left the
              limit's schedule (end_rem -1: it took a returned slot) and the reserved instant

Returns   1

  token-bucket    while the stored schedule still ends at (end, end_rem): the theoretical
  gcra            arrival time time + debt / perMicro and its remainder, debt % perMicro (nothing
                  reserved, decided or paused into it since), the end moves back by the cost:
                  the time by its whole microseconds, the debt by the rest (borrowing one
                  microsecond if it must), and the next request gets the slot. Otherwise the
                  requests behind it were placed after it, and moving the end back would put two
                  calls in one slot: the slot is kept among the returned slots (cost tokens at
                  slot), while it is ahead of now and the schedule still holds it (it ends at
                  least the cost's time after the slot), and the next reservation takes it before
                  it extends the schedule; at most 32 are kept, the latest dropped first
  fixed-window    the count less cost, at least 0, while the stored window is the reservation's (end)
  sliding-window  the current count less cost while the stored window is the reservation's, the
                  previous count while the stored window is the one after it; a window's count
                  does not depend on the order within it, so whatever was booked after it
  sliding-log     the newest cost entries dropped while the newest is the reservation's (end):
                  entries of one instant are alike
Nothing happens to an absent key, to a bucket written under other units, or to a window or log
written under another period. Writes keep the state key's TTL (SET KEEPTTL, HSET, LTRIM, LSET): a
give-back only brings the state's equality with an absent key sooner; the returned slots expire
with the schedule (one microsecond after its end). The Java twin is LimitState.giveBack in dev.sluice.memory.
--]]

-- idiv, int, second, same_units, read_state, write_state, read_limit, read_slots, write_slots,
-- most_slots, covers, clock: state.lua, sent in front of this script

local now = clock()

-- Keeps cost tokens at slot among the returned slots at `slots_key`, expiring with the schedule,
-- which ends at `till`
local function return_slot(slots_key, a, slot, till)
  local slots = {}
  for _, s in ipairs(read_slots(slots_key, a)) do
    if s[1] >= now then slots[#slots + 1] = s end
  end
  local at = #slots + 1
  for j, s in ipairs(slots) do
    if s[1] == slot then
      s[2] = s[2] + a.cost
      write_slots(slots_key, a, slots, now, till)
      return
    end
    if s[1] > slot then
      at = j
      break
    end
  end
  table.insert(slots, at, {slot, a.cost})
  if #slots > most_slots then slots[#slots] = nil end
  write_slots(slots_key, a, slots, now, till)
end

local function bucket(key, a, e, er, slot, slots_key)
  local time, debt, per_token, per_micro, capacity = read_state(key)
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
      -- keeping the key's TTL
      write_state(key, t, left, a)
      return
    end
  end
  if slot >= now and covers(end_at, end_rem, slot, a.cost * a.per_token, a.per_micro) then
    return_slot(slots_key, a, slot, end_at + 1)
  end
end

local function fixed_window(key, a, e)
  local s = redis.call('HMGET', key, 'w', 'n', 'f')
  if not s[1] or (s[3] and second(s[3]) ~= a.window) or tonumber(s[1]) ~= e then return end
  local n = tonumber(s[2]) - a.cost
  if n < 0 then n = 0 end
  redis.call('HSET', key, 'n', int(n))
end

local function sliding_window(key, a, e)
  local s = redis.call('HMGET', key, 'w', 'c', 'p', 'f')
  if not s[1] or (s[4] and second(s[4]) ~= a.window) then return end
  local w = tonumber(s[1])
  local field, n
  if w == e then
    field, n = 'c', tonumber(s[2])
  elseif w == e + 1 then
    field, n = 'p', tonumber(s[3])
  else
    return
  end
  n = n - a.cost
  if n < 0 then n = 0 end
  redis.call('HSET', key, field, int(n))
end

local function sliding_log(key, a, e)
  local newest = redis.call('LINDEX', key, -1)
  if not newest then return end
  local at = string.find(newest, '@', 1, true)
  local stamp = newest
  if at then
    if string.sub(newest, at + 1) ~= a.fp then return end
    stamp = string.sub(newest, 1, at - 1)
  end
  if tonumber(stamp) ~= e then return end
  drop_newest(key, a.cost, at and a.fp)
end

-- Keyed by the ids Java sends (DecideScript.id), as in decide.lua
local algorithms = {
  [1] = bucket,
  [2] = bucket,
  [3] = sliding_window,
  [4] = fixed_window,
  [5] = sliding_log,
}

local n = #KEYS / 2
local limits = {}
for i = 1, n do
  local base = 2 + 10 * (i - 1)
  local a = read_limit(base)
  a.run = algorithms[a.algorithm]
  if not a.run then
    return redis.error_reply('unknown algorithm id ' .. ARGV[base])
  end
  a.e, a.er, a.slot = tonumber(ARGV[base + 7]), tonumber(ARGV[base + 8]), tonumber(ARGV[base + 9])
  limits[i] = a
end
-- every limit is checked before any key is written: a bad id gives back nothing
for i = 1, n do
  limits[i].run(KEYS[i], limits[i], limits[i].e, limits[i].er, limits[i].slot, KEYS[n + i])
end
return 1
