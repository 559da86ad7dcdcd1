--[[
Sluice: the sliding window, every operation on its state (Java twin:
dev.sluice.spi.algorithm.SlidingWindow). Cloudflare's counter: the counts of the current and the previous window of the period, the
previous one weighted by the share of it still inside the trailing window.

State: a hash  w window index (now / window), c its count, p the previous window's count,
f 'count,window' (its fingerprint). A state without f is read as written under the current
parameters.

Operations as token_bucket.lua states them, with:
  refund      the stored current count less cost, at least 0, while it is this window's or the
              previous one's (the caller has not committed since the window turned)
  pause       the last window starting before till, and the one before it, count full: its weight
              decays over the next window
  give_back   the current count less cost while the stored window is the reservation's (e), the
              previous count while the stored window is the one after it: a window's count does
              not depend on the order within it
  slot_end    the stored window's index
Nothing is refunded or given back under another period. Writes keep the key's TTL, except a
decision's and a pause's, which expire the key when the previous count weighs nothing.

A changed limit (another fingerprint): same period, the counts stay; another period, each old
window's count goes to the new window holding its start, at most the new count, until the old
state has passed (its key gone).

Invariants: 0 <= remaining <= count; the key expires one window after its window ends.
--]]

local function prepare(a)
  a.fp = int(a.count) .. ',' .. int(a.window)
end

local function decide(key, now, a, commit)
  local count, window, cost = a.count, a.window, a.cost
  local idx = idiv(now, window)
  local w, cur, prev, gone = idx, 0, 0, false
  local s = redis.call('HMGET', key, 'w', 'c', 'p', 'f')
  if s[1] then
    local sw, sc, sp = tonumber(s[1]), tonumber(s[2]), tonumber(s[3])
    if s[4] and s[4] ~= a.fp then
      local old_window = second(s[4])
      if old_window ~= window then
        -- another grid: each old window's count goes to the new window holding its start, at
        -- most the count, until the old state has passed (its key gone)
        gone = (sw + 2) * old_window
        if gone > now then
          local pw = idiv((sw - 1) * old_window, window)
          sw = idiv(sw * old_window, window)
          if pw == sw then
            sc, sp = sc + sp, 0
          elseif pw < sw - 1 then
            sp = 0
          end
          if sc > count then sc = count end
          if sp > count then sp = count end
        else
          sw = idx - 2
        end
      end
    end
    if sw >= idx then
      w, cur, prev = sw, sc, sp
    elseif sw == idx - 1 then
      prev = sc
    else
      gone = false
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
  local reset = finish - now
  -- one unit more than remaining: while prev decays in this window, or else once cur has become
  -- the previous window's count and decays in the next one
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
  -- after m commits: while prev still weighs, the next unit is where it decays by one more;
  -- otherwise cur + m * cost decays in the next window, one unit after ceil(window / (cur + m * cost))
  local batch
  if weighted > 0 then
    local b = finish - idiv((cdiv(weighted, window) - 1) * window, prev) - now
    batch = {finish - now, 0, 0, 1, 0, b, 0, 0, 1, 0}
  else
    batch = {finish - now, 0, 0, 1, 0, finish - now, window, 0, cur, cost}
  end
  if fits and commit then
    redis.call('HSET', key, 'w', int(w), 'c', int(cur), 'p', int(prev), 'f', a.fp)
    expire(key, finish + window - now)
  else
    reset, retry, nxt = until_gone(gone, now, reset, retry, nxt)
  end
  local from = start - now
  if from < 0 then from = 0 end
  return fits, remaining, reset, retry, nxt, batch, from
end

local function refund(key, now, a)
  local s = redis.call('HMGET', key, 'w', 'c', 'f')
  if not s[1] or (s[3] and second(s[3]) ~= a.window) then return end
  if tonumber(s[1]) < idiv(now, a.window) - 1 then return end
  local c = tonumber(s[2]) - a.cost
  if c < 0 then c = 0 end
  redis.call('HSET', key, 'c', int(c))
end

local function pause(key, now, a, till)
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

local function give_back(key, a, e)
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

local function slot_end(key)
  return tonumber(redis.call('HGET', key, 'w')), 0
end

return {
  prepare = prepare,
  decide = decide,
  refund = refund,
  pause = pause,
  give_back = give_back,
  slot_end = slot_end,
}
