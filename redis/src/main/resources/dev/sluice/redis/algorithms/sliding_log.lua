--[[
Sluice: the sliding log, every operation on its state (Java twin: dev.sluice.spi.algorithm.SlidingLog).
Exact: one timestamp per admitted unit, a unit counting until a window after its time; memory
bounded by count entries per key.

State: a list, one time (microseconds) per admitted unit, oldest first; the newest is
'<time>@<window>' (its fingerprint). A log without one is read as written under the current window.

Operations as token_bucket.lua states them, with:
  refund      the newest cost entries dropped (all, if there are fewer)
  pause       count entries, the i-th (from 1) at till - window + i * window / count; entries
              already later stay
  give_back   the newest cost entries dropped while the newest is the reservation's (e): entries
              of one instant are alike
  slot_end    the newest entry's time
  now_only    a log reserves only what it has now: entries stamped ahead would trim ones that still
              count now, which a refund could not bring back
Nothing is refunded or given back under another window. Writes keep the key's TTL, except a
decision's and a pause's, which expire the key when its newest entry leaves the window.

A changed limit: the entries count as they are under the new count and window (the log may hold
more than the count; a commit leaves at most count); under another window, until the old window
has passed since the newest entry (its key gone).

Invariants: 0 <= remaining <= count; entries ascend; a commit leaves at most count entries.
--]]

local function prepare(a)
  a.fp = int(a.window)
end

-- A log entry: its time, and the fingerprint the newest entry carries
local function entry(key, i)
  local s = redis.call('LINDEX', key, i)
  local at = string.find(s, '@', 1, true)
  if at then return tonumber(string.sub(s, 1, at - 1)), string.sub(s, at + 1) end
  return tonumber(s), false
end

local function decide(key, now, a, commit)
  local count, window, cost = a.count, a.window, a.cost
  local size = redis.call('LLEN', key)
  local t = now
  local lo, hi = 0, size
  local newest, tagged, gone = 0, false, false
  if size > 0 then
    local f
    newest, f = entry(key, -1)
    tagged = f
    if f and f ~= a.fp then
      -- written under another window: read under this one until the old window has passed
      -- since the newest entry (its key gone)
      gone = newest + tonumber(f)
      if gone <= now then
        lo, gone = size, false
      end
    end
    if lo < size and newest > t then t = newest end
  end
  -- entries ascend: binary search for the first one still inside the window
  while lo < hi do
    local mid = math.floor((lo + hi) / 2)
    if entry(key, mid) + window <= t then lo = mid + 1 else hi = mid end
  end
  local expired = lo
  local live = size - expired
  local fits = live + cost <= count
  local retry = 0
  if not fits then
    -- live may exceed the count (written under a larger one); this index stays within the log
    retry = entry(key, expired + live + cost - count - 1) + window - now
  end
  if fits and commit then
    if expired > 0 then redis.call('LTRIM', key, expired, -1) end
    if tagged and live > 0 then
      -- only the newest entry carries the fingerprint
      redis.call('LSET', key, -1, int(newest))
    end
    local stamp = int(t)
    local left = cost
    while left > 0 do
      local batch = {}
      for i = 1, math.min(left, 1000) do batch[i] = stamp end
      left = left - #batch
      if left == 0 then batch[#batch] = stamp .. '@' .. a.fp end
      redis.call('RPUSH', key, unpack(batch))
    end
    live = live + cost
  end
  local reset = 0
  if live > 0 then
    if fits and commit then
      reset = t + window - now
    else
      reset = entry(key, -1) + window - now
    end
  end
  -- one unit more than remaining: the oldest live entry leaves (after a commit the expired ones
  -- are gone); a log holding more than the count (written under a larger one) must first fall
  -- to count - 1 entries
  local nxt = 0
  if live > 0 then
    local oldest = expired
    if fits and commit then
      oldest = 0
    elseif live > count then
      oldest = expired + live - count
    end
    nxt = entry(key, oldest) + window - now
  end
  -- after m commits: the newest entries are at t; the oldest is the first live one, or t
  local batch = nil
  if fits and not commit then
    local oldest = t
    if live > 0 then oldest = entry(key, expired) end
    batch = {t + window - now, 0, 0, 1, 0, oldest + window - now, 0, 0, 1, 0}
  end
  if fits and commit then
    expire(key, reset)
  else
    reset, retry, nxt = until_gone(gone, now, reset, retry, nxt)
  end
  local remaining = count - live
  if remaining < 0 then remaining = 0 end
  return fits, remaining, reset, retry, nxt, batch, t - now
end

-- Drops the log's newest cost entries (a refund, a reservation given back); fp, when the newest
-- entry carried the limit's fingerprint, goes onto the newest one left
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

local function refund(key, now, a)
  local newest = redis.call('LINDEX', key, -1)
  if not newest then return end
  local at = string.find(newest, '@', 1, true)
  if at and string.sub(newest, at + 1) ~= a.fp then return end
  drop_newest(key, a.cost, at and a.fp)
end

local function pause(key, now, a, till)
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

local function give_back(key, a, e)
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

local function slot_end(key)
  return entry(key, -1), 0
end

return {
  now_only = true,
  prepare = prepare,
  decide = decide,
  refund = refund,
  pause = pause,
  give_back = give_back,
  slot_end = slot_end,
}
