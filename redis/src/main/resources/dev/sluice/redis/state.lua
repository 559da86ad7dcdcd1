--[[
Sluice: the helpers decide.lua and refund.lua share, sent in front of each of them (DecideScript
and LuaScript prepend this file when they load a script), so that both read and write a
bucket's state with one piece of code: integer division, TTLs, fingerprints, the token
bucket's and GCRA's stored state in every format this and earlier versions wrote, the clock
and the limits' arguments.
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

local function expire(key, ttl_us)
  local ms = cdiv(ttl_us, 1000)
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

-- The units a fingerprint of an earlier version names, 'perToken.perMicro.burst' in hex or
-- 'perToken,perMicro,capacity' in decimal, as per_token, per_micro, capacity; a state without a
-- fingerprint (older still) counts as written under this limit's units
local function units_of(f, a)
  if not f then return a.per_token, a.per_micro, a.capacity end
  local pt, pm, burst = string.match(f, '^(%x+)%.(%x+)%.(%x+)$')
  if pt then
    pt = tonumber(pt, 16)
    return pt, tonumber(pm, 16), pt * tonumber(burst, 16)
  end
  return numbers(f)
end

-- Whether a bucket's state was written under this limit's units
local function same_units(per_token, per_micro, capacity, a)
  return per_token == a.per_token and per_micro == a.per_micro and capacity == a.capacity
end

-- A token bucket's or GCRA's stored state, or nil: the time it was written, its debt then (the
-- units used: capacity - level for the token bucket, (tat - written) * perMicro + rem for GCRA),
-- and the per_token, per_micro and capacity it was written under. Any version's format, the
-- current one first (see Stored state above); an earlier one is read until the next commit
-- rewrites it, so a rolling deploy neither resets nor wedges a caller.
local function read_state(key, now, a, is_gcra)
  local s = redis.pcall('GET', key)
  if type(s) == 'table' then
    -- not a string: the token bucket's decimal hash l, t, f
    local h = redis.call('HMGET', key, 'l', 't', 'f')
    if not h[1] then return nil end
    local pt, pm, cap = units_of(h[3], a)
    return tonumber(h[2]), cap - tonumber(h[1]), pt, pm, cap
  end
  if not s then return nil end
  if string.byte(s, 1) < 32 then
    local debt, pt, pm, burst = cmsgpack.unpack(string.sub(s, 8))
    return struct.unpack('>I7', s), debt, pt, pm, pt * burst
  end
  if not is_gcra then
    local l, t, f = string.match(s, '^(%x+)%.(%x+)%.(.+)$')
    if not l then return nil end
    local pt, pm, cap = units_of(f, a)
    return tonumber(t, 16), cap - tonumber(l, 16), pt, pm, cap
  end
  local tat, r, written, f = nil, 0, nil, nil
  local x1, x2, x3, x4 = string.match(s, '^(%x+)%.(%x+)%.(%x+)%.(.+)$')
  if x1 then
    tat, r, f = tonumber(x1, 16), tonumber(x2, 16), x4
    written = tat - tonumber(x3, 16)
  else
    local at = string.find(s, '@', 1, true)
    if at then
      local at2 = string.find(s, '@', at + 1, true)
      written, f = tonumber(string.sub(s, at + 1, at2 - 1)), string.sub(s, at2 + 1)
      s = string.sub(s, 1, at - 1)
    end
    local colon = string.find(s, ':', 1, true)
    if colon then
      tat, r = tonumber(string.sub(s, 1, colon - 1)), tonumber(string.sub(s, colon + 1))
    else
      tat = tonumber(s)
    end
    if not tat then return nil end
  end
  -- '<tat>[:<rem>]' alone counts as written now (its debt below 0 once tat has passed)
  local pt, pm, cap = units_of(f, a)
  written = written or now
  return written, (tat - written) * pm + r, pt, pm, cap
end

-- Writes a bucket's state in the current format, expiring after ttl_us (a decision) or keeping
-- the key's TTL (a refund, when ttl_us is nil)
local function write_state(key, time, debt, a, ttl_us)
  local value = struct.pack('>I7', time) .. cmsgpack.pack(debt, a.per_token, a.per_micro, a.burst)
  if not ttl_us then
    redis.call('SET', key, value, 'KEEPTTL')
    return
  end
  local ms = cdiv(ttl_us, 1000)
  if ms < 1 then ms = 1 end
  redis.call('SET', key, value, 'PX', int(ms))
end

-- The time in microseconds: ARGV[1] if a test set it, else the Redis server's clock (TIME);
-- production always sends '', so application clocks never reach a script
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
