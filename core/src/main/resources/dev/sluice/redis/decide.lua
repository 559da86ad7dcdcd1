--[[
Sluice: decide one request against one or more limits, atomically, in one round trip.

KEYS[i]   state of limit i, all sharing one hash tag (the caller): sluice:{<caller>}:<policy>:<suffix>
ARGV[1]   the time in microseconds, or '' to read the Redis server's clock (TIME); production
          always sends '', so application clocks never reach this script
ARGV[2]   how many identical requests to decide, one after another in arrival order, at the same
          instant (concurrent requests of one JVM for one caller, coalesced into one call)
ARGV[3..] seven values per limit i, at 3 + 7 * (i - 1):
            algorithm  1 token-bucket, 2 gcra, 3 sliding-window, 4 fixed-window, 5 sliding-log
            count      units per period
            window     the period, microseconds
            perToken   fixed-point units per token   (buckets; see dev.sluice.internal.Units)
            perMicro   fixed-point units refilled per microsecond (buckets)
            capacity   bucket capacity in units (buckets); count otherwise
            cost       units this request spends, 1 <= cost <= capacity in tokens

Returns   for each request: { allowed, then for each limit: fits, remaining, reset_us, retry_us, next_us },
          flattened. allowed is 1 only if every limit fits; then each limit's cost has been
          consumed. Otherwise that request wrote nothing. Times are microseconds from now; next_us
          is the time until the limit grants one unit more than remaining (0 when it is whole).

Invariants
  * All or nothing: the first pass only reads; the second, run only when every limit fits, writes.
  * Every key written gets a TTL in the same script: the time until its state equals an absent key.
  * Stored time never moves backwards: a clock behind the stored state grants nothing extra.
  * Every number stays an integer below 2^53 (checked by Units.check in Java), so Lua's doubles
    compute exactly what the Java twins in dev.sluice.memory.LimitState compute.
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

-- Each algorithm: (key, now, limit, commit) -> fits, remaining, reset, retry, next
-- It writes only when commit is true and the request fits.

local function token_bucket(key, now, a, commit)
  local per_token, per_micro, cap = a.per_token, a.per_micro, a.capacity
  local t, l = now, cap
  local s = redis.call('HMGET', key, 'l', 't')
  if s[1] then
    local ts = tonumber(s[2])
    l = tonumber(s[1])
    if ts > now then t = ts end
    local missing = cap - l
    if missing > 0 then
      local elapsed = t - ts
      if elapsed >= cdiv(missing, per_micro) then l = cap else l = l + elapsed * per_micro end
    end
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
  if fits and commit then
    redis.call('HSET', key, 'l', int(l), 't', int(t))
    expire(key, reset)
  end
  local nxt = 0
  if l < cap then nxt = skew + cdiv((idiv(l, per_token) + 1) * per_token - l, per_micro) end
  return fits, idiv(l, per_token), reset, retry, nxt
end

local function gcra(key, now, a, commit)
  local per_token, per_micro, cap = a.per_token, a.per_micro, a.capacity
  local need = a.cost * per_token
  local delay, r = -1, 0
  local s = redis.call('GET', key)
  if s then
    local colon = string.find(s, ':', 1, true)
    if colon then
      delay = tonumber(string.sub(s, 1, colon - 1)) - now
      r = tonumber(string.sub(s, colon + 1))
    else
      delay = tonumber(s) - now
    end
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
  if fits and commit then
    local value = int(now + delay)
    if r > 0 then value = value .. ':' .. int(r) end
    local ms = cdiv(reset, 1000)
    if ms < 1 then ms = 1 end
    redis.call('SET', key, value, 'PX', int(ms))
  end
  local nxt = 0
  if over or debt ~= 0 then nxt = delay + cdiv(r + (remaining + 1) * per_token - cap, per_micro) end
  return fits, remaining, reset, retry, nxt
end

local function fixed_window(key, now, a, commit)
  local count, window = a.count, a.window
  local idx = idiv(now, window)
  local w, n = idx, 0
  local s = redis.call('HMGET', key, 'w', 'n')
  if s[1] and tonumber(s[1]) >= idx then
    w = tonumber(s[1])
    n = tonumber(s[2])
  end
  local fits = n + a.cost <= count
  if fits and commit then n = n + a.cost end
  local reset = (w + 1) * window - now
  local retry = 0
  if not fits then retry = reset end
  if fits and commit then
    redis.call('HSET', key, 'w', int(w), 'n', int(n))
    expire(key, reset)
  end
  local nxt = 0
  if n > 0 then nxt = reset end
  return fits, count - n, reset, retry, nxt
end

local function sliding_window(key, now, a, commit)
  local count, window, cost = a.count, a.window, a.cost
  local idx = idiv(now, window)
  local w, cur, prev = idx, 0, 0
  local s = redis.call('HMGET', key, 'w', 'c', 'p')
  if s[1] then
    local sw = tonumber(s[1])
    if sw >= idx then
      w, cur, prev = sw, tonumber(s[2]), tonumber(s[3])
    elseif sw == idx - 1 then
      prev = tonumber(s[2])
    end
  end
  local start = w * window
  local e = now - start
  if e < 0 then e = 0 end
  local weighted = prev * (window - e)
  local room = count - cur - cost
  local fits = room >= 0 and weighted <= room * window
  if fits and commit then cur = cur + cost end
  local remaining = count - cdiv(weighted, window) - cur
  if remaining < 0 then remaining = 0 end
  local finish = start + window
  local retry = 0
  if not fits then
    if room >= 0 then
      retry = finish - idiv(room * window, prev) - now
    else
      local into = 0
      if cur > 0 then
        into = window - idiv((count - cost) * window, cur)
        if into < 0 then into = 0 end
      end
      retry = finish + into - now
    end
  end
  if fits and commit then
    redis.call('HSET', key, 'w', int(w), 'c', int(cur), 'p', int(prev))
    expire(key, finish + window - now)
  end
  local nxt = 0
  if remaining < count then
    local k = count - cur - remaining - 1
    if k >= 0 and prev > 0 then
      nxt = finish - idiv(k * window, prev) - now
    else
      local into = window - idiv((count - remaining - 1) * window, cur)
      if into < 0 then into = 0 end
      nxt = finish + into - now
    end
  end
  return fits, remaining, finish - now, retry, nxt
end

local function sliding_log(key, now, a, commit)
  local count, window, cost = a.count, a.window, a.cost
  local size = redis.call('LLEN', key)
  local t = now
  if size > 0 then
    local newest = tonumber(redis.call('LINDEX', key, -1))
    if newest > t then t = newest end
  end
  -- entries ascend: binary search for the first one still inside the window
  local lo, hi = 0, size
  while lo < hi do
    local mid = math.floor((lo + hi) / 2)
    if tonumber(redis.call('LINDEX', key, mid)) + window <= t then lo = mid + 1 else hi = mid end
  end
  local expired = lo
  local live = size - expired
  local fits = live + cost <= count
  local retry = 0
  if not fits then
    retry = tonumber(redis.call('LINDEX', key, expired + live + cost - count - 1)) + window - now
  end
  if fits and commit then
    if expired > 0 then redis.call('LTRIM', key, expired, -1) end
    local stamp = int(t)
    local left = cost
    while left > 0 do
      local batch = {}
      for i = 1, math.min(left, 1000) do batch[i] = stamp end
      redis.call('RPUSH', key, unpack(batch))
      left = left - #batch
    end
    live = live + cost
  end
  local reset = 0
  if live > 0 then
    if fits and commit then
      reset = t + window - now
    else
      reset = tonumber(redis.call('LINDEX', key, -1)) + window - now
    end
  end
  if fits and commit then expire(key, reset) end
  local nxt = 0
  if live > 0 then
    local oldest = expired
    if fits and commit then oldest = 0 end
    nxt = tonumber(redis.call('LINDEX', key, oldest)) + window - now
  end
  return fits, count - live, reset, retry, nxt
end

local algorithms = { token_bucket, gcra, sliding_window, fixed_window, sliding_log }

local now
if ARGV[1] ~= '' then
  now = tonumber(ARGV[1])
else
  local time = redis.call('TIME')
  now = tonumber(time[1]) * 1000000 + tonumber(time[2])
end

local requests = tonumber(ARGV[2])
local limits = {}
for i = 1, #KEYS do
  local base = 3 + 7 * (i - 1)
  limits[i] = {
    algorithm = tonumber(ARGV[base]),
    count = tonumber(ARGV[base + 1]),
    window = tonumber(ARGV[base + 2]),
    per_token = tonumber(ARGV[base + 3]),
    per_micro = tonumber(ARGV[base + 4]),
    capacity = tonumber(ARGV[base + 5]),
    cost = tonumber(ARGV[base + 6]),
  }
end

local result = {}
local width = 1 + 5 * #KEYS
for r = 0, requests - 1 do
  local at = r * width
  local all = true
  result[at + 1] = 0
  for i = 1, #KEYS do
    local fits, remaining, reset, retry, nxt = algorithms[limits[i].algorithm](KEYS[i], now, limits[i], false)
    all = all and fits
    local f = 0
    if fits then f = 1 end
    result[at + 2 + 5 * (i - 1)] = f
    result[at + 3 + 5 * (i - 1)] = remaining
    result[at + 4 + 5 * (i - 1)] = reset
    result[at + 5 + 5 * (i - 1)] = retry
    result[at + 6 + 5 * (i - 1)] = nxt
  end
  if all then
    result[at + 1] = 1
    for i = 1, #KEYS do
      local _, remaining, reset, retry, nxt = algorithms[limits[i].algorithm](KEYS[i], now, limits[i], true)
      result[at + 3 + 5 * (i - 1)] = remaining
      result[at + 4 + 5 * (i - 1)] = reset
      result[at + 5 + 5 * (i - 1)] = retry
      result[at + 6 + 5 * (i - 1)] = nxt
    end
  end
end

return result
