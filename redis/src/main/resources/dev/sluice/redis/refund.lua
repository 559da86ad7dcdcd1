--[[
Sluice: give back what one allowed request spent under one or more limits, atomically, in one
round trip (charge=after: a request charged up front whose response turned out not to count).

KEYS[i]   state of limit i, as decide.lua names it (one hash tag: the caller)
ARGV[1]   the time in microseconds, or '' to read the Redis server's clock (TIME); production
          always sends ''
ARGV[2..] seven values per limit i, at 2 + 7 * (i - 1), exactly as decide.lua reads them:
          algorithm, count, window, perToken, perMicro, capacity, cost

Returns   1

A refund never gives more than an untouched caller has, and never creates a key:
  token-bucket    the level refilled to now, plus cost tokens, at most the capacity
  gcra            the debt at now, less cost tokens, at least 0
  fixed-window    the count less cost, at least 0, while the stored window is the current one
  sliding-window  the stored current count less cost, at least 0, while it is this window's or
                  the previous one's (the caller has not committed since the window turned)
  sliding-log     the newest cost entries dropped (all, if there are fewer)
Nothing happens to an absent key, to a bucket written under other units, or to a window or log
written under another period: that state counts differently, and a redeploy forgives nothing.
Stored state is read and written as decide.lua reads and writes it (see its Stored state): the
token bucket and gcra in one binary string (7 bytes of time, then the MessagePack integers debt,
perToken, perMicro, burst), by the same helpers: state.lua, sent in front of both scripts.
Writes keep the key's TTL (SET KEEPTTL, HSET, LTRIM, LSET): a refund only brings the state's
equality with an absent key sooner. The Java twin is LimitState.refund in dev.sluice.memory.
--]]

-- idiv, cdiv, int, expire, numbers, second, same_units, read_state, write_state:
-- state.lua, sent in front of this script

local function token_bucket(key, now, a)
  local ts, debt, per_token, per_micro, capacity = read_state(key)
  if not ts or not same_units(per_token, per_micro, capacity, a) then return end
  local l = a.capacity - debt
  local t = now
  if ts > now then t = ts end
  local missing = a.capacity - l
  if missing > 0 then
    if t - ts >= cdiv(missing, a.per_micro) then l = a.capacity else l = l + (t - ts) * a.per_micro end
  end
  l = l + a.cost * a.per_token
  if l > a.capacity then l = a.capacity end
  -- keeping the key's TTL
  write_state(key, t, a.capacity - l, a)
end

local function gcra(key, now, a)
  local written, owed, per_token, per_micro, capacity = read_state(key)
  if not written or not same_units(per_token, per_micro, capacity, a) then return end
  local d = idiv(owed, a.per_micro)
  local tat, r = written + d, owed - d * a.per_micro
  if tat < now then return end
  local debt = (tat - now) * a.per_micro + r - a.cost * a.per_token
  if debt < 0 then debt = 0 end
  -- written now, keeping the key's TTL
  write_state(key, now, debt, a)
end

local function fixed_window(key, now, a)
  local s = redis.call('HMGET', key, 'w', 'n', 'f')
  if not s[1] or (s[3] and second(s[3]) ~= a.window) then return end
  if tonumber(s[1]) < idiv(now, a.window) then return end
  local n = tonumber(s[2]) - a.cost
  if n < 0 then n = 0 end
  redis.call('HSET', key, 'n', int(n))
end

local function sliding_window(key, now, a)
  local s = redis.call('HMGET', key, 'w', 'c', 'f')
  if not s[1] or (s[3] and second(s[3]) ~= a.window) then return end
  if tonumber(s[1]) < idiv(now, a.window) - 1 then return end
  local c = tonumber(s[2]) - a.cost
  if c < 0 then c = 0 end
  redis.call('HSET', key, 'c', int(c))
end

local function sliding_log(key, now, a)
  local newest = redis.call('LINDEX', key, -1)
  if not newest then return end
  local at = string.find(newest, '@', 1, true)
  if at and string.sub(newest, at + 1) ~= a.fp then return end
  drop_newest(key, a.cost, at and a.fp)
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

local limits = {}
for i = 1, #KEYS do
  local base = 2 + 7 * (i - 1)
  local a = read_limit(base)
  a.run = algorithms[a.algorithm]
  if not a.run then
    return redis.error_reply('unknown algorithm id ' .. ARGV[base])
  end
  limits[i] = a
end
-- every key is checked before any is written: a bad id refunds nothing
for i = 1, #KEYS do
  limits[i].run(KEYS[i], now, limits[i])
end
return 1
