--[[
Sluice: the fixed window, every operation on its state (Java twin:
dev.sluice.spi.algorithm.FixedWindow). One counter per window of the period, reset at the window's edge: documented as allowing
twice the count across an edge.

State: a hash  w window index (now / window), n count, f 'count,window' (its fingerprint). A state
without f is read as written under the current parameters.

Operations as token_bucket.lua states them, with:
  refund      the count less cost, at least 0, while the stored window is the current one
  pause       the last window starting before till counts full
  give_back   the count less cost, at least 0, while the stored window is the reservation's (e)
  slot_end    the stored window's index
Nothing is refunded or given back under another period. Writes keep the key's TTL, except a
decision's and a pause's, which expire the key when its window ends.

A changed limit (another fingerprint): the count stays in the new window holding the old window's
start, until the old window ends (its key gone).

Invariants: 0 <= remaining <= count; the key expires when its window ends.
--]]

local function prepare(a)
  a.fp = int(a.count) .. ',' .. int(a.window)
end

local function decide(key, now, a, commit)
  local count, window = a.count, a.window
  local idx = idiv(now, window)
  local w, n, gone = idx, 0, false
  local s = redis.call('HMGET', key, 'w', 'n', 'f')
  if s[1] then
    local sw = tonumber(s[1])
    if s[3] and s[3] ~= a.fp then
      -- written under another limit: the count stays in the new window holding the old window's
      -- start, until the old window ends (its key gone)
      local old_window = second(s[3])
      gone = (sw + 1) * old_window
      sw = idiv(sw * old_window, window)
      if gone <= now then sw = idx - 1 end
    end
    if sw >= idx then
      w = sw
      n = tonumber(s[2])
    else
      gone = false
    end
  end
  local fits = n + a.cost <= count
  if fits and commit then n = n + a.cost end
  local reset = (w + 1) * window - now
  local retry = 0
  if not fits then retry = reset end
  -- counted units come back all at once, when the window ends
  local nxt = 0
  if n > 0 then nxt = reset end
  -- after m commits: the same window, its end both reset and next
  local batch = {reset, 0, 0, 1, 0, reset, 0, 0, 1, 0}
  if fits and commit then
    redis.call('HSET', key, 'w', int(w), 'n', int(n), 'f', a.fp)
    expire(key, reset)
  else
    reset, retry, nxt = until_gone(gone, now, reset, retry, nxt)
  end
  local remaining = count - n
  if remaining < 0 then remaining = 0 end
  local from = w * window - now
  if from < 0 then from = 0 end
  return fits, remaining, reset, retry, nxt, batch, from
end

local function refund(key, now, a)
  local s = redis.call('HMGET', key, 'w', 'n', 'f')
  if not s[1] or (s[3] and second(s[3]) ~= a.window) then return end
  if tonumber(s[1]) < idiv(now, a.window) then return end
  local n = tonumber(s[2]) - a.cost
  if n < 0 then n = 0 end
  redis.call('HSET', key, 'n', int(n))
end

local function pause(key, now, a, till)
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

local function give_back(key, a, e)
  local s = redis.call('HMGET', key, 'w', 'n', 'f')
  if not s[1] or (s[3] and second(s[3]) ~= a.window) or tonumber(s[1]) ~= e then return end
  local n = tonumber(s[2]) - a.cost
  if n < 0 then n = 0 end
  redis.call('HSET', key, 'n', int(n))
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
