--[[
Sluice: reserve one request (RateLimiter.acquire) under one or more limits at the earliest instant,
at most a longest wait ahead, where every limit fits and its slot has begun, atomically, in one
round trip (RateLimitStore.book).

KEYS[i]     state of limit i, as decide.lua names it (one hash tag: the caller), i from 1 to n
KEYS[n+i]   limit i's returned slots: its key followed by ':slots' (see algorithms/bucket.lua)
ARGV[1]     the time in microseconds, or '' to read the Redis server's clock (TIME); production
            always sends ''
ARGV[2]     the longest wait in microseconds, at least 0
ARGV[3..]   seven values per limit i, at 3 + 7 * (i - 1), exactly as decide.lua reads them:
            algorithm, count, window, perToken, perMicro, capacity, cost

Returns   reserved (1 or 0), the wait in microseconds, then per limit fits, remaining, reset_us,
          retry_us, next_us (as of the reserved instant, or as of now when refused); when reserved,
          then per limit end, end_rem and slot: where it left the limit's schedule (its module's
          slot_end; a returned slot taken: the slot and -1) and the reserved instant, for
          giveback.lua

From now, each round moves to the longest retry of a limit that does not fit, or to the latest
`from` of those that do, and commits once a round finds nothing to wait for (at most four
rounds). Before it extends any schedule, it takes the earliest returned slot that comes sooner.
A refusal writes nothing. TTLs count from the reserved instant (ttl_shift in shared.lua). The
Java twin is Reservation.reserve in dev.sluice.memory.
--]]

-- shared.lua and the algorithms' modules are sent in front of this script (LuaScript composes
-- them): clock, read_limit, ttl_shift, each limit's run (decide, slot_end, returned, holds, take)

local now = clock()
local max_wait = tonumber(ARGV[2])
local n = #KEYS / 2
local limits, keys = {}, {}
for i = 1, n do
  limits[i] = read_limit(3 + 7 * (i - 1))
  keys[i] = KEYS[i]
  if limits[i].run.now_only then max_wait = 0 end
end

-- Appends each limit's answer at `at` (fits, remaining, reset, retry, next), committing it or not
local function answer_each(result, at, commit)
  for i = 1, n do
    local fits, remaining, reset, retry, nxt = limits[i].run.decide(keys[i], at, limits[i], commit)
    local f = 0
    if fits then f = 1 end
    for _, v in ipairs({f, remaining, reset, retry, nxt}) do result[#result + 1] = v end
  end
end

-- The earliest slot a bucket's waiter gave up (giveback.lua), from now to latest and before
-- `before`, where every limit admits the reservation: a limit that returned at least its cost
-- there while its schedule still holds the slot (taking[i] true), any other limit fitting with its
-- slot begun; nil if none. Writes nothing. The Java twin is Caller.returnedSlot.
local function returned_slot(latest, before, taking)
  local returned, candidates = {}, {}
  for i = 1, n do
    local l = limits[i]
    returned[i] = {}
    if l.run.returned then
      for _, slot in ipairs(l.run.returned(KEYS[n + i], l, now)) do
        if slot[1] <= latest and slot[1] < before then
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
    for i = 1, n do
      if not all then break end
      local l = limits[i]
      taking[i] = returned[i][x] ~= nil and returned[i][x] >= l.cost and l.run.holds(keys[i], l, x)
      if not taking[i] then
        local fits, _, _, _, _, _, from = l.run.decide(keys[i], x, l, false)
        all = fits and from == 0
      end
    end
    if all then return x end
  end
  return nil
end

local result = {}
local at = now
local rounds = 0
local refused = nil
while true do
  local all, step = true, 0
  for i = 1, n do
    local l = limits[i]
    local fits, _, _, retry, _, _, from = l.run.decide(keys[i], at, l, false)
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
  slot = returned_slot(now + max_wait, before, taking)
end
if slot then
  at = slot
elseif refused then
  -- refused: nothing written; the wait it would need, and each limit as of now
  result[1] = 0
  result[2] = refused
  answer_each(result, now, false)
  return result
end
ttl_shift = at - now
result[1] = 1
result[2] = at - now
local ends = {}
for i = 1, n do
  local l = limits[i]
  if slot and taking[i] then
    -- a slot the schedule granted already: its units were spent then, nothing more is
    local _, remaining, reset, _, nxt = l.run.decide(keys[i], at, l, false)
    for _, v in ipairs({1, remaining, reset, 0, nxt}) do result[#result + 1] = v end
    l.run.take(KEYS[n + i], keys[i], l, at, now)
    ends[i] = {at, -1}
  else
    local fits, remaining, reset, retry, nxt = l.run.decide(keys[i], at, l, true)
    local f = 0
    if fits then f = 1 end
    for _, v in ipairs({f, remaining, reset, retry, nxt}) do result[#result + 1] = v end
    ends[i] = {l.run.slot_end(keys[i], l)}
  end
end
for i = 1, n do
  result[#result + 1] = ends[i][1]
  result[#result + 1] = ends[i][2]
  result[#result + 1] = at
end
return result
