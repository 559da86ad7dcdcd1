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
ARGV[2]   G, the number of groups; then each group in turn:
            limits     L, its number of limits (its number of KEYS)
            requests   how many identical requests to decide, one after another in arrival order,
                       at the same instant (concurrent requests of one JVM for one caller,
                       coalesced into one group)
            then seven values per limit i, in order:
            algorithm  its id, one shared.lua's algorithm function names (DecideScript.id in Java)
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

Stored state: each algorithm's file in algorithms/ (token_bucket.lua, gcra.lua and bucket.lua,
fixed_window.lua, sliding_window.lua, sliding_log.lua) lays out its state and keeps its invariant.

A changed limit (same key, another fingerprint): what was used carries over, clamped to the new
limit, until the old state would have expired (its TTL): from then on it reads as absent, and
until then a rejection's reset, retry and next are at most that long. Nothing is rewritten until a
request that fits commits under the new parameters. How each algorithm converts: its file.

Invariants
  * All or nothing: the first pass only reads; the second, run only when every limit fits, writes.
  * A batch costs the same Redis work as one request: one read per limit, one write of all the
    admitted costs at once (m commits of cost c leave the state one commit of m * c leaves), and
    one more read for the answer of the refused; no loop over the requests. A bucket (token
    bucket, GCRA) is fetched and decoded once per group: its read pass and its commit share the
    read (bucket.read), so an admitted decision costs one GET and one SET.
  * Every key written gets a TTL in the same script: the time until its state equals an absent key.
  * Stored time never moves backwards: a clock behind the stored state grants nothing extra.
  * Read under any parameters: 0 <= remaining <= capacity; on a clock that does not go back,
    0 <= reset, retry <= the new limit's time to restore its whole budget. next is computed
    from the converted state, as retry is: for a refused request of cost 1 it equals retry.
  * Every number stays an integer below 2^53 (checked by Units.check in Java), so Lua's doubles
    compute exactly what the Java twins in dev.sluice.spi.algorithm compute.
--]]

-- shared.lua and the algorithms' modules are sent in front of this script (LuaScript composes
-- them): idiv, int, clock, read_limit, each limit's run.decide

-- Alone: one request of one caller against one limit, the common, uncontended case, with the same
-- reply as decide below gives a group of one request, without its tables
if ARGV[2] == '1' and ARGV[3] == '1' and ARGV[4] == '1' then
  local a = read_limit(5)
  local now = clock()
  local fits, remaining, reset, retry, nxt, b = a.run.decide(KEYS[1], now, a, false)
  if fits and idiv(remaining, a.cost) >= 1 then
    a.run.decide(KEYS[1], now, a, true)
    return {1, remaining, b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10]}
  end
  local f = 0
  if fits then f = 1 end
  return {0, remaining, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, f, remaining, reset, retry, nxt}
end

local now = clock()

-- The limits whose keys are KEYS[first ..] and whose values start at ARGV[at], and their keys
local function read_group(first, count, at)
  local limits, keys = {}, {}
  for i = 1, count do
    local base = at + 7 * (i - 1)
    limits[i] = read_limit(base)
    keys[i] = KEYS[first + i - 1]
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
    local fits, remaining, reset, retry, nxt, batch = l.run.decide(keys[i], now, l, false)
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
      l.run.decide(keys[i], now, l, true)
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
        fits, remaining, reset, retry, nxt = limits[i].run.decide(keys[i], now, limits[i], false)
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

local result = {}
local groups = tonumber(ARGV[2])
if groups == 1 then
  -- one group: a failure fails the call
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
