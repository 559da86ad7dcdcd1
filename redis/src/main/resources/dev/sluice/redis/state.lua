--[[
Sluice: the helpers decide.lua, refund.lua, giveback.lua and pause.lua share, sent in front of
each of them (DecideScript and LuaScript prepend this file when they load a script), so that all
read and write a bucket's state with one piece of code: integer division, TTLs, fingerprints, the token
bucket's and GCRA's stored state, the clock and the limits' arguments.
--]]

-- floor(a / b) for integers, exact even where the double quotient rounds
local function idiv(a, b)
  local q = math.floor(a / b)
  if q * b > a then
    q = q - 1
  elseif (q + 1) * b <= a then
    q = q + 1
  end
  return q
end

local function cdiv(a, b)
  return -idiv(-a, b)
end

local function int(x)
  return string.format('%d', x)
end

-- Added to every TTL written: a reservation commits at an instant ahead of the clock, and the
-- TTLs its algorithms compute count from that instant
local ttl_shift = 0

local function expire(key, ttl_us)
  local ms = cdiv(ttl_us + ttl_shift, 1000)
  if ms < 1 then ms = 1 end
  redis.call('PEXPIRE', key, int(ms))
end

-- The numbers of a fingerprint: 'a,b,c' -> a, b, c
local function numbers(f)
  local v = {}
  for x in string.gmatch(f, '%d+') do v[#v + 1] = tonumber(x) end
  return v[1], v[2], v[3]
end

-- The second number of a fingerprint 'a,b[,c]': the window of a window's fingerprint
local function second(f)
  local _, window = numbers(f)
  return window
end

-- Whether a bucket's state was written under this limit's units
local function same_units(per_token, per_micro, capacity, a)
  return per_token == a.per_token and per_micro == a.per_micro and capacity == a.capacity
end

-- A token bucket's or GCRA's stored state, or nil: the time it was written, its debt then (the
-- units used: capacity - level for the token bucket, (tat - written) * perMicro + rem for GCRA),
-- and the per_token, per_micro and capacity it was written under (see Stored state in
-- decide.lua). A key of another type fails the call (WRONGTYPE); a string in no format this
-- version writes (its first byte not below 0x20) reads as absent, and the next commit replaces it.
local function read_state(key)
  local s = redis.call('GET', key)
  if not s or string.byte(s, 1) >= 32 then return nil end
  local debt, pt, pm, burst = cmsgpack.unpack(string.sub(s, 8))
  return struct.unpack('>I7', s), debt, pt, pm, pt * burst
end

-- Writes a bucket's state in the current format, expiring after ttl_us (a decision) or keeping
-- the key's TTL (a refund, when ttl_us is nil)
local function write_state(key, time, debt, a, ttl_us)
  local value = struct.pack('>I7', time) .. cmsgpack.pack(debt, a.per_token, a.per_micro, a.burst)
  if not ttl_us then
    redis.call('SET', key, value, 'KEEPTTL')
    return
  end
  local ms = cdiv(ttl_us + ttl_shift, 1000)
  if ms < 1 then ms = 1 end
  redis.call('SET', key, value, 'PX', int(ms))
end

-- The time in microseconds: ARGV[1] if a test set it, else the Redis server's clock (TIME);
-- production always sends '', so application clocks never reach a script
-- Drops a sliding log's newest cost entries (a refund, a reservation given back); fp, when the
-- newest entry carried the limit's fingerprint, goes onto the newest one left
local function drop_newest(key, cost, fp)
  local size = redis.call('LLEN', key)
  local drop = cost
  if drop > size then drop = size end
  -- an emptied list is deleted by Redis itself
  redis.call('LTRIM', key, 0, -drop - 1)
  if fp and drop < size then
    redis.call('LSET', key, -1, redis.call('LINDEX', key, -1) .. '@' .. fp)
  end
end

-- Returned slots (a token bucket's or GCRA's slots whose waiters gave them up while reservations
-- were booked behind them; RateLimitStore.giveBack): one string at the bucket's key followed by
-- ':slots', '<perToken>,<perMicro>,<capacity>|<at>:<tokens>,<at>:<tokens>...', instants in
-- microseconds ascending, at most most_slots, expiring with the bucket's schedule (every slot kept
-- lies inside it). The Java twin is ReturnedSlots in dev.sluice.memory.
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
-- keeps the limit's spacing from the schedule's next slot (LimitState.covers)
local function covers(e, er, x, need, per_micro)
  local span = e - x
  if span < 0 then return false end
  if span >= cdiv(need, per_micro) then return true end
  return span * per_micro + er >= need
end

local function clock()
  if ARGV[1] ~= '' then return tonumber(ARGV[1]) end
  local time = redis.call('TIME')
  return tonumber(time[1]) * 1000000 + tonumber(time[2])
end

-- A limit's seven values from ARGV[base ..], in DecideScript.encode's order: algorithm id
-- (1 token-bucket, 2 gcra, 3 sliding-window, 4 fixed-window, 5 sliding-log), count, window,
-- perToken, perMicro, capacity, cost; with a bucket's burst (its units are in its state) or the
-- fingerprint a window's or log's state carries
local function read_limit(base)
  local l = {
    algorithm = tonumber(ARGV[base]),
    count = tonumber(ARGV[base + 1]),
    window = tonumber(ARGV[base + 2]),
    per_token = tonumber(ARGV[base + 3]),
    per_micro = tonumber(ARGV[base + 4]),
    capacity = tonumber(ARGV[base + 5]),
    cost = tonumber(ARGV[base + 6]),
  }
  if l.algorithm == 1 or l.algorithm == 2 then
    l.burst = idiv(l.capacity, l.per_token)
  elseif l.algorithm == 5 then
    l.fp = int(l.window)
  else
    l.fp = int(l.count) .. ',' .. int(l.window)
  end
  return l
end
