--[[
Sluice: hold a caller's budget under one or more limits spent until a provider's pause ends, for
every instance sharing this Redis, atomically, in one round trip (RateLimitStore.pause).

KEYS[i]   state of limit i, as decide.lua names it (one hash tag: the caller), i from 1 to n
KEYS[n+i] limit i's returned slots (its key followed by ':slots', see state.lua): a bucket's are
          deleted
ARGV[1]   the time in microseconds, or '' to read the Redis server's clock (TIME); production
          always sends ''
ARGV[2]   the pause in microseconds, at least 1: it ends at now + pause
ARGV[3..] seven values per limit i, at 3 + 7 * (i - 1), exactly as decide.lua reads them

Returns   1

From the end on the budget comes back at the limit's own pace, never all at once:
  token-bucket    empty at the end, refilling from there
  gcra            the debt of a full bucket at the end (the same admissions as the token bucket)
  fixed-window    the last window starting before the end counts full
  sliding-window  the last window starting before the end, and the one before it, count full: its
                  weight decays over the next window
  sliding-log     count entries, the i-th (from 1) at end - window + i * window / count
A pause never grants: state spent further ahead (reservations booked past the end) keeps what it
has, taking the lower of both where they overlap. State written under other units or another
window is replaced. Each key written expires when it equals an absent key. The Java twin is
LimitState.pause in dev.sluice.memory.
--]]

-- idiv, cdiv, int, expire, numbers, second, same_units, read_state, write_state, clock,
-- read_limit: state.lua, sent in front of this script

local function token_bucket(key, now, a, till)
  local ts, debt, per_token, per_micro, capacity = read_state(key)
  local t, l = till, 0
  if ts then
    if ts > till then t = ts end
    if ts > till and same_units(per_token, per_micro, capacity, a) then
      -- booked past the pause's end: the lower of the two buckets at ts
      l = a.capacity - debt
      if cdiv(l, a.per_micro) > ts - till then l = (ts - till) * a.per_micro end
    end
  end
  write_state(key, t, a.capacity - l, a, t - now + cdiv(a.capacity - l, a.per_micro))
end

local function gcra(key, now, a, till)
  local tat, r = till + idiv(a.capacity, a.per_micro), a.capacity % a.per_micro
  local written, owed, per_token, per_micro, capacity = read_state(key)
  if written and same_units(per_token, per_micro, capacity, a) then
    local d = idiv(owed, a.per_micro)
    local at, rem = written + d, owed - d * a.per_micro
    if at > tat or (at == tat and rem >= r) then return end
  end
  local reset = tat - now
  if r > 0 then reset = reset + 1 end
  write_state(key, till, a.capacity, a, reset)
end

local function fixed_window(key, now, a, till)
  local last = idiv(till - 1, a.window)
  local n = a.count
  local s = redis.call('HMGET', key, 'w', 'n', 'f')
  if s[1] and (not s[3] or second(s[3]) == a.window) then
    local sw = tonumber(s[1])
    if sw > last then return end
    if sw == last and tonumber(s[2]) > n then n = tonumber(s[2]) end
  end
  redis.call('HSET', key, 'w', int(last), 'n', int(n), 'f', a.fp)
  expire(key, (last + 1) * a.window - now)
end

local function sliding_window(key, now, a, till)
  local last = idiv(till - 1, a.window)
  local c, p = a.count, a.count
  local s = redis.call('HMGET', key, 'w', 'c', 'p', 'f')
  if s[1] and (not s[4] or second(s[4]) == a.window) then
    local sw = tonumber(s[1])
    if sw > last then
      -- booked past the pause's end: the window before it counts full
      if sw == last + 1 and tonumber(s[3]) < a.count then redis.call('HSET', key, 'p', int(a.count)) end
      return
    end
    if sw == last then
      if tonumber(s[2]) > c then c = tonumber(s[2]) end
      if tonumber(s[3]) > p then p = tonumber(s[3]) end
    end
  end
  redis.call('HSET', key, 'w', int(last), 'c', int(c), 'p', int(p), 'f', a.fp)
  expire(key, (last + 2) * a.window - now)
end

local function sliding_log(key, now, a, till)
  local count, window = a.count, a.window
  local old = {}
  local newest = redis.call('LINDEX', key, -1)
  if newest then
    local at = string.find(newest, '@', 1, true)
    if not at or string.sub(newest, at + 1) == a.fp then
      old = redis.call('LRANGE', key, -count, -1)
    end
  end
  local entries = {}
  for i = 1, count do
    local e = till - window + idiv(i * window, count)
    local kept = old[#old - count + i]
    if kept then
      local k = tonumber(string.match(kept, '^%d+'))
      if k > e then e = k end
    end
    entries[i] = int(e)
  end
  local last = tonumber(entries[count])
  entries[count] = entries[count] .. '@' .. a.fp
  redis.call('DEL', key)
  for i = 1, count, 1000 do
    redis.call('RPUSH', key, unpack(entries, i, math.min(i + 999, count)))
  end
  expire(key, last + window - now)
end

-- Keyed by the ids Java sends (DecideScript.id), as in decide.lua
local algorithms = {
  [1] = token_bucket,
  [2] = gcra,
  [3] = sliding_window,
  [4] = fixed_window,
  [5] = sliding_log,
}

local now = clock()
local till = now + tonumber(ARGV[2])

local n = #KEYS / 2
local limits = {}
for i = 1, n do
  local base = 3 + 7 * (i - 1)
  local a = read_limit(base)
  a.run = algorithms[a.algorithm]
  if not a.run then
    return redis.error_reply('unknown algorithm id ' .. ARGV[base])
  end
  limits[i] = a
end
-- every key is checked before any is written: a bad id pauses nothing
for i = 1, n do
  limits[i].run(KEYS[i], now, limits[i], till)
  if limits[i].algorithm == 1 or limits[i].algorithm == 2 then
    -- a slot given up before the pause's end must not be sent in it
    redis.call('DEL', KEYS[n + i])
  end
end
return 1
