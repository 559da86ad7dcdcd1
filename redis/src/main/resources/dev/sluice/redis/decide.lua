--[[
Sluice: decide requests against one or more limits, atomically, in one round trip: one group
(one caller's identical requests, all its limits at once) or several groups of different callers
at once, each decided on its own.

KEYS      the keys of every group, group after group; group g's key i holds the state of its
          limit i, and all keys of one group share one hash tag (the caller):
          sluice:{<caller>}:<policy>:<suffix>. The groups of one call live on one Redis (single
          server, or a Sentinel's master); on a cluster each group is a call of its own.
ARGV[1]   the time in microseconds, or '' to read the Redis server's clock (TIME); production
          always sends '', so application clocks never reach this script. One time for all groups.
ARGV[2]   G, the number of groups (or -1: one reservation, see reserve below); then each group in turn:
            limits     L, its number of limits (its number of KEYS)
            requests   how many identical requests to decide, one after another in arrival order,
                       at the same instant (concurrent requests of one JVM for one caller,
                       coalesced into one group)
            then seven values per limit i, in order:
            algorithm  its id, a key of the algorithms table below: 1 token-bucket, 2 gcra,
                       3 sliding-window, 4 fixed-window, 5 sliding-log (DecideScript.id in Java)
            count      units per period
            window     the period, microseconds
            perToken   fixed-point units per token   (buckets; see dev.sluice.internal.Units)
            perMicro   fixed-point units refilled per microsecond (buckets)
            capacity   bucket capacity in units (buckets); count otherwise
            cost       units this request spends, 1 <= cost <= capacity in tokens

Returns   the groups' replies one after another, each of constant size whatever its number of
          requests (DecideScript.replyWidth in Java):
            admitted   how many of the requests were allowed: always the first ones (a refused
                       request changes nothing, so every identical one after it is refused too);
                       all their costs have been consumed, the others wrote nothing
            then for each limit, eleven values for the admitted: remaining before the batch
                       (request m, from 1, sees remaining - m * cost), then reset and next after m
                       admissions, each as five values a, b, c, d, e meaning
                       a + ceil((b + m * c) / (d + m * e)) microseconds
            then, only if admitted < requests, for each limit the answer every refused request
                       gets: fits, remaining, reset_us, retry_us, next_us
          or, for a group that failed (a key holding another type, say), two values: -1 and the
          error's message; that group's requests fail, the other groups are decided as usual
          (a call of one group fails as a script error instead, at no cost to the common case).
          Times are microseconds from now; next_us is the time until the limit grants one unit more
          than remaining (0 when it is whole).

Stored state (f: the fingerprint of the parameters it was written under)
  token-bucket    one binary string of 11 to 43 bytes (19 for 100 per hour): the time written, 7
  gcra            bytes big-endian, then the MessagePack integers debt, perToken, perMicro, burst
                  (the last three are f). debt is the units used at that time: capacity - level
                  for the token bucket; for gcra the units owed, so tat = time + debt / perMicro
                  and rem = debt % perMicro. A time below 2^53 starts with a byte below 0x20:
                  a string starting otherwise is in no format this script writes and reads as
                  absent; a key of another type fails the group (WRONGTYPE).
                  Redis keeps a string of up to 44 bytes in one allocation with its header
                  (embstr): 19 bytes take 48.
  fixed-window    hash  w window index, n count, f 'count,window'
  sliding-window  hash  w window index, c its count, p the previous window's count, f 'count,window'
  sliding-log     list  one time per admitted unit, oldest first; the newest is '<time>@<window>'
  A window's or log's state without f (this script always writes one) is read as written under
  the current parameters.
  returned slots  a token bucket's or GCRA's key followed by ':slots', one string
                  '<perToken>,<perMicro>,<capacity>|<at>:<tokens>,...': slots given up inside the
                  schedule (giveback.lua), read and taken only by the reservation form (see
                  read_slots in state.lua); expires with the schedule

A changed limit (same key, another fingerprint): what was used carries over, clamped to the new
limit, until the old state would have expired (its TTL): from then on it reads as absent, and
until then a rejection's reset, retry and next are at most that long. Nothing is rewritten until a
request that fits commits under the new parameters.
  buckets   the whole tokens used when written (rounded up), at most the new burst, refill at
            the new rate from the time written
  fixed     the count stays in the new window holding the old window's start
  sliding   same period: the counts stay; another period: each old window's count goes to the
            new window holding its start, at most the new count
  log       the entries count as they are under the new count and window (the log may hold
            more than the count; a commit leaves at most count)

Invariants
  * All or nothing: the first pass only reads; the second, run only when every limit fits, writes.
  * A batch costs the same Redis work as one request: one read per limit, one write of all the
    admitted costs at once (m commits of cost c leave the state one commit of m * c leaves), and
    one more read for the answer of the refused; no loop over the requests. A bucket (token
    bucket, GCRA) is fetched and decoded once per group: its read pass and its commit share the
    read (read_bucket), so an admitted decision costs one GET and one SET.
  * Every key written gets a TTL in the same script: the time until its state equals an absent key.
  * Stored time never moves backwards: a clock behind the stored state grants nothing extra.
  * Read under any parameters: 0 <= remaining <= capacity; on a clock that does not go back,
    0 <= reset, retry <= the new limit's time to restore its whole budget. next is computed
    from the converted state, as retry is: for a refused request of cost 1 it equals retry.
  * Every number stays an integer below 2^53 (checked by Units.check in Java), so Lua's doubles
    compute exactly what the Java twins in dev.sluice.memory.LimitState compute.
--]]

-- idiv, cdiv, int, expire, numbers, second, same_units, read_state, write_state:
-- state.lua, sent in front of this script

-- Each bucket's state as this call read it, decoded: a group's read pass and its commit fetch
-- and decode a bucket once (one GET, one SET per decision). A write forgets it, so that a read
-- after a write (the refused of a batch that admitted some) reads what was written.
local buckets = {}

local function read_bucket(key)
  local s = buckets[key]
  if not s then
    s = {read_state(key)}
    buckets[key] = s
  end
  return s[1], s[2], s[3], s[4], s[5]
end

local function write_bucket(key, time, debt, a, ttl_us)
  buckets[key] = nil
  write_state(key, time, debt, a, ttl_us)
end

-- A bucket's level after elapsed microseconds of refill
local function refill(l, cap, per_micro, elapsed)
  local missing = cap - l
  if missing > 0 then
    if elapsed >= cdiv(missing, per_micro) then return cap end
    return l + elapsed * per_micro
  end
  return l
end

-- The tokens a bucket written under other units had used, as units of this one: whole tokens,
-- rounded up, at most this burst
local function converted_debt(old_debt, old_per_token, a)
  local used = cdiv(old_debt, old_per_token)
  if used > a.burst then used = a.burst end
  return used * a.per_token
end

-- Caps a converted state's times at when its key would have expired under the old parameters:
-- from then on the budget is whole again
local function until_gone(gone, now, reset, retry, nxt)
  if gone then
    if reset > gone - now then reset = gone - now end
    if retry > gone - now then retry = gone - now end
    if nxt > gone - now then nxt = gone - now end
  end
  return reset, retry, nxt
end

-- Each algorithm: (key, now, limit, commit) -> fits, remaining, reset, retry, next, batch, from
-- (from: until the slot the request counts in begins, when later than now: a bucket written
-- ahead, a window booked ahead; a reservation must not start before it)
-- It writes only when commit is true and the request fits.

local function token_bucket(key, now, a, commit)
  local per_token, per_micro, cap = a.per_token, a.per_micro, a.capacity
  local t, l, gone = now, cap, false
  local ts, debt, old_per_token, old_per_micro, old_cap = read_bucket(key)
  if ts then
    l = cap - debt
    if ts > now then t = ts end
    if not same_units(old_per_token, old_per_micro, old_cap, a) then
      -- written under other units: the tokens used at ts carry over, clamped to this burst, and
      -- refill at this rate, until the old bucket would be full (its key gone)
      gone = ts + cdiv(debt, old_per_micro)
      if gone <= now then
        l, gone = cap, false
      else
        l = cap - converted_debt(debt, old_per_token, a)
      end
    end
    l = refill(l, cap, per_micro, t - ts)
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
  -- the next whole token: (l / per_token + 1) tokens, reached by refilling from l
  local nxt = 0
  if l < cap then nxt = skew + cdiv((idiv(l, per_token) + 1) * per_token - l, per_micro) end
  local batch = nil
  if fits and commit then
    write_bucket(key, t, cap - l, a, reset)
  else
    reset, retry, nxt = until_gone(gone, now, reset, retry, nxt)
    -- after m commits the level is l - m * need; the next token stays as far away
    batch = {skew, cap - l, need, per_micro, 0,
             skew + cdiv((idiv(l, per_token) + 1) * per_token - l, per_micro), 0, 0, 1, 0}
  end
  return fits, idiv(l, per_token), reset, retry, nxt, batch, skew
end

local function gcra(key, now, a, commit)
  local per_token, per_micro, cap = a.per_token, a.per_micro, a.capacity
  local need = a.cost * per_token
  local delay, r, gone = -1, 0, false
  local written, owed, old_per_token, old_per_micro, old_cap = read_bucket(key)
  if written then
    if not same_units(old_per_token, old_per_micro, old_cap, a) then
      -- written under other units: the tokens owed when written carry over, clamped to this
      -- burst, and drain at this rate, until the old debt would be paid (its key gone)
      gone = written + cdiv(owed, old_per_micro)
      if gone <= now then
        written, owed, gone = now - 1, 0, false
      else
        owed = converted_debt(owed, old_per_token, a)
      end
    end
    -- the theoretical arrival time: written + owed / perMicro, and the remainder rem
    local d = idiv(owed, per_micro)
    r = owed - d * per_micro
    delay = written + d - now
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
  -- debt must fall to cap - (remaining + 1) tokens; written as retry is, from delay and r
  local nxt = 0
  if over or debt ~= 0 then nxt = delay + cdiv(r + (remaining + 1) * per_token - cap, per_micro) end
  local batch = nil
  if not commit and not over then
    -- after m commits the debt is debt + m * need; the debt of the next token stays as far away
    batch = {0, debt, need, per_micro, 0, cdiv(debt + (remaining + 1) * per_token - cap, per_micro), 0, 0, 1, 0}
  end
  if fits and commit then
    write_bucket(key, now, debt, a, reset)
  else
    reset, retry, nxt = until_gone(gone, now, reset, retry, nxt)
  end
  -- a debt within the capacity may be spent now
  return fits, remaining, reset, retry, nxt, batch, 0
end

-- Alone: one request of one caller against one token bucket or GCRA, the common, uncontended
-- case, decided here before the rest of this script (the windows, the log, batches, several
-- limits, reservations) is defined, by the same functions and with the same reply as decide
-- below gives a group of one request. Each local function is created anew on every call, and
-- those below would cost this case about a tenth of its Redis time.
if ARGV[2] == '1' and ARGV[3] == '1' and ARGV[4] == '1' and (ARGV[5] == '1' or ARGV[5] == '2') then
  local a = read_limit(5)
  local run = token_bucket
  if a.algorithm == 2 then run = gcra end
  local now = clock()
  local fits, remaining, reset, retry, nxt, b = run(KEYS[1], now, a, false)
  if fits and idiv(remaining, a.cost) >= 1 then
    run(KEYS[1], now, a, true)
    return {1, remaining, b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10]}
  end
  local f = 0
  if fits then f = 1 end
  return {0, remaining, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, f, remaining, reset, retry, nxt}
end

local function fixed_window(key, now, a, commit)
  local count, window = a.count, a.window
  local idx = idiv(now, window)
  local w, n, gone = idx, 0, false
  local s = redis.call('HMGET', key, 'w', 'n', 'f')
  if s[1] then
    local sw = tonumber(s[1])
    if s[3] and s[3] ~= a.fp then
      -- written under another limit: the count stays in the new window holding the old window's
      -- start, until the old window ends (its key gone)
      local _, old_window = numbers(s[3])
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

local function sliding_window(key, now, a, commit)
  local count, window, cost = a.count, a.window, a.cost
  local idx = idiv(now, window)
  local w, cur, prev, gone = idx, 0, 0, false
  local s = redis.call('HMGET', key, 'w', 'c', 'p', 'f')
  if s[1] then
    local sw, sc, sp = tonumber(s[1]), tonumber(s[2]), tonumber(s[3])
    if s[4] and s[4] ~= a.fp then
      local _, old_window = numbers(s[4])
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

-- A log entry: its time, and the fingerprint the newest entry carries
local function entry(key, i)
  local s = redis.call('LINDEX', key, i)
  local at = string.find(s, '@', 1, true)
  if at then return tonumber(string.sub(s, 1, at - 1)), string.sub(s, at + 1) end
  return tonumber(s), false
end

local function sliding_log(key, now, a, commit)
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

-- Keyed by the ids Java sends (DecideScript.id), written out: never by position
local algorithms = {
  [1] = token_bucket,
  [2] = gcra,
  [3] = sliding_window,
  [4] = fixed_window,
  [5] = sliding_log,
}

local now = clock()

-- The limits whose keys are KEYS[first ..] and whose values start at ARGV[at], and their keys
local function read_group(first, count, at)
  local limits, keys = {}, {}
  for i = 1, count do
    local base = at + 7 * (i - 1)
    limits[i] = read_limit(base)
    keys[i] = KEYS[first + i - 1]
    local l = limits[i]
    l.run = algorithms[l.algorithm]
    if not l.run then
      error('unknown algorithm id ' .. ARGV[base], 0)
    end
  end
  return limits, keys
end

-- Decides one group: `requests` identical requests against the `count` limits whose keys are
-- KEYS[first ..] and whose values start at ARGV[at]; appends its reply to `result`.
local function decide(result, first, count, at, requests)
  local limits, keys = read_group(first, count, at)

  -- The batch, decided arithmetically: identical requests at one instant fit in a prefix (a
  -- refused request changes nothing, so every one after it is refused too), and each limit admits
  -- floor(remaining / cost) of them. One read per limit, one write of all admitted costs, and one
  -- more read for the refused, whatever the number of requests.
  local admitted = requests
  local seen = {}
  for i = 1, count do
    local l = limits[i]
    local fits, remaining, reset, retry, nxt, batch = l.run(keys[i], now, l, false)
    seen[i] = {fits, remaining, reset, retry, nxt, batch}
    local fit = 0
    if fits then fit = idiv(remaining, l.cost) end
    if fit < admitted then admitted = fit end
  end
  if admitted > 0 then
    for i = 1, count do
      local l = limits[i]
      -- m commits of cost c leave exactly the state one commit of m * c leaves
      local cost = l.cost
      l.cost = admitted * cost
      l.run(keys[i], now, l, true)
      l.cost = cost
    end
  end

  result[#result + 1] = admitted
  for i = 1, count do
    local batch = seen[i][6]
    result[#result + 1] = seen[i][2]
    for j = 1, 10 do
      if admitted > 0 then result[#result + 1] = batch[j] else result[#result + 1] = 0 end
    end
  end
  if admitted < requests then
    for i = 1, count do
      local fits, remaining, reset, retry, nxt
      if admitted == 0 then
        fits, remaining, reset, retry, nxt = seen[i][1], seen[i][2], seen[i][3], seen[i][4], seen[i][5]
      else
        fits, remaining, reset, retry, nxt = limits[i].run(keys[i], now, limits[i], false)
      end
      local f = 0
      if fits then f = 1 end
      result[#result + 1] = f
      result[#result + 1] = remaining
      result[#result + 1] = reset
      result[#result + 1] = retry
      result[#result + 1] = nxt
    end
  end
end

-- Appends each limit's answer at `at` (fits, remaining, reset, retry, next), committing it or not.
local function answer_each(result, limits, keys, count, at, commit)
  for i = 1, count do
    local fits, remaining, reset, retry, nxt = limits[i].run(keys[i], at, limits[i], commit)
    local f = 0
    if fits then f = 1 end
    for _, v in ipairs({f, remaining, reset, retry, nxt}) do result[#result + 1] = v end
  end
end

-- Where a reservation left limit `a`'s schedule, for giveback.lua (RateLimitStore.book): a bucket's
-- theoretical arrival time and remainder (time + debt / perMicro, debt % perMicro), a window's
-- index, a log's newest entry; then 0. The Java twin is LimitState.end.
local function slot_end(key, a)
  if a.algorithm == 1 or a.algorithm == 2 then
    local time, debt = read_bucket(key)
    local d = idiv(debt, a.per_micro)
    return time + d, debt - d * a.per_micro
  elseif a.algorithm == 5 then
    return entry(key, -1), 0
  end
  return tonumber(redis.call('HGET', key, 'w')), 0
end

-- The earliest slot a bucket's waiter gave up (giveback.lua), from now to latest and before
-- `before`, where every limit admits the reservation: a bucket that returned at least its cost
-- there under its units while its schedule still holds the slot (taking[i] true), any other
-- limit fitting with its slot begun; nil if none. Writes nothing. The Java twin is
-- Caller.returnedSlot.
local function returned_slot(limits, keys, count, latest, before, taking)
  local returned, candidates = {}, {}
  for i = 1, count do
    local l = limits[i]
    returned[i] = {}
    if l.algorithm == 1 or l.algorithm == 2 then
      for _, slot in ipairs(read_slots(KEYS[count + i], l)) do
        if slot[1] >= now and slot[1] <= latest and slot[1] < before then
          returned[i][slot[1]] = slot[2]
          candidates[#candidates + 1] = slot[1]
        end
      end
    end
  end
  if #candidates == 0 then return nil end
  table.sort(candidates)
  for _, x in ipairs(candidates) do
    local all = true
    for i = 1, count do
      if not all then break end
      local l = limits[i]
      taking[i] = false
      if returned[i][x] and returned[i][x] >= l.cost then
        local time, debt, per_token, per_micro, capacity = read_bucket(keys[i])
        if time and same_units(per_token, per_micro, capacity, l) then
          local d = idiv(debt, l.per_micro)
          taking[i] = covers(time + d, debt - d * l.per_micro, x, l.cost * l.per_token, l.per_micro)
        end
      end
      if not taking[i] then
        local fits, _, _, _, _, _, from = l.run(keys[i], x, l, false)
        all = fits and from == 0
      end
    end
    if all then return x end
  end
  return nil
end

-- Reserves one request (RateLimiter.acquire) at the earliest instant, at most max_wait ahead,
-- where every limit fits and its slot has begun: from now, each round moves to the longest retry
-- of a limit that does not fit, or to the latest `from` of those that do, and commits once a round
-- finds nothing to wait for (at most four rounds). Before it extends any schedule, it takes the
-- earliest returned slot that comes sooner (returned_slot). The Java twin is Caller.reserve.
local function reserve(count, max_wait)
  local limits, keys = read_group(1, count, 5)
  for i = 1, count do
    -- entries stamped ahead would trim ones that still count now, which a refund could not
    -- bring back: a log reserves only what it has now
    if limits[i].algorithm == 5 then max_wait = 0 end
  end
  local result = {}
  local at = now
  local rounds = 0
  local refused = nil
  while true do
    local all, step = true, 0
    for i = 1, count do
      local l = limits[i]
      local fits, _, _, retry, _, _, from = l.run(keys[i], at, l, false)
      local wait = from
      if not fits then
        all = false
        wait = retry
      end
      if wait > step then step = wait end
    end
    if all and step == 0 then break end
    rounds = rounds + 1
    if step < 1 then step = 1 end
    if rounds == 4 or step > max_wait - (at - now) then
      refused = at - now + step
      break
    end
    at = at + step
  end
  local taking = {}
  local slot = nil
  if max_wait > 0 then
    local before = at
    if refused then before = math.huge end
    slot = returned_slot(limits, keys, count, now + max_wait, before, taking)
  end
  if slot then
    at = slot
  elseif refused then
    -- refused: nothing written; the wait it would need, and each limit as of now
    result[1] = 0
    result[2] = refused
    answer_each(result, limits, keys, count, now, false)
    return result
  end
  ttl_shift = at - now
  result[1] = 1
  result[2] = at - now
  local ends = {}
  for i = 1, count do
    local l = limits[i]
    if slot and taking[i] then
      -- a slot the schedule granted already: its units were spent then, nothing more is
      local fits, remaining, reset, retry, nxt = l.run(keys[i], at, l, false)
      for _, v in ipairs({1, remaining, reset, 0, nxt}) do result[#result + 1] = v end
      local slots = read_slots(KEYS[count + i], l)
      for _, s in ipairs(slots) do
        if s[1] == at then s[2] = s[2] - l.cost end
      end
      local e = slot_end(keys[i], l)
      write_slots(KEYS[count + i], l, slots, now, e + 1)
      ends[#ends + 1] = {at, -1}
    else
      answer_each(result, {l}, {keys[i]}, 1, at, true)
      ends[#ends + 1] = {slot_end(keys[i], l)}
    end
  end
  for i = 1, count do
    result[#result + 1] = ends[i][1]
    result[#result + 1] = ends[i][2]
    result[#result + 1] = at
  end
  return result
end

local result = {}
local groups = tonumber(ARGV[2])
if groups == -1 then
  -- a reservation: ARGV[3] the longest wait in microseconds, ARGV[4] the number of limits n, then
  -- seven values per limit as for a group; KEYS[1..n] the limits' states, KEYS[n + i] limit i's
  -- returned slots (its key followed by ':slots', see state.lua); replies reserved (1 or 0), the
  -- wait in microseconds, then per limit fits, remaining, reset_us, retry_us, next_us (as of the
  -- reserved instant, or as of now when refused); when reserved, then per limit end, end_rem and
  -- slot: where it left the limit's schedule (slot_end; a returned slot taken: the slot and -1)
  -- and the reserved instant, for giveback.lua
  return reserve(tonumber(ARGV[4]), tonumber(ARGV[3]))
end
if groups == 1 then
  -- alone (the common, uncontended case): as cheap as before batching; a failure fails the call
  decide(result, 1, tonumber(ARGV[3]), 5, tonumber(ARGV[4]))
  return result
end

-- Every group under pcall: a group that fails (a key of the wrong type, say) answers -1 and its
-- message, and fails only its own requests; the groups around it are decided as usual.
local first, at = 1, 3
for g = 1, groups do
  local count, requests = tonumber(ARGV[at]), tonumber(ARGV[at + 1])
  local mark = #result
  local ok, failure = pcall(decide, result, first, count, at + 2, requests)
  if not ok then
    -- whatever part of a reply the group appended before failing goes
    for j = #result, mark + 1, -1 do result[j] = nil end
    -- Redis 7 raises a table with the reply's message in err, Redis 6.2 the message itself
    if type(failure) == 'table' then failure = failure.err end
    result[#result + 1] = -1
    result[#result + 1] = tostring(failure)
  end
  first = first + count
  at = at + 2 + 7 * count
end
return result
