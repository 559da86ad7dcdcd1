--[[
Sluice: what every script of this package that counts by an algorithm shares, sent in front of it
(LuaSource composes each such script once, at load time: this file, then each file of algorithms/
wrapped as a module, then the script itself; Redis scripts have no require). Here: the algorithm
ids, the modules, integer arithmetic, TTLs, fingerprints, the clock and a limit's arguments.

A module (one file of algorithms/) is a branch of one function, run_module, returning a table of
its operations, the return that ends the file; use(name) runs it at most once per call. A helper
(a file no id names, bucket.lua) is written before run_module instead, its names prefixed with its
own (bucket.read becomes bucket_read, local bucket = use('bucket') goes). Every
function and table is created anew on every call, and a function in a branch not taken is not
created at all, so a call creates the modules of the algorithms it counts by only, and
LuaSource leaves out of each script the operations its driver never calls (run.<operation>) and
the functions nothing references any more.

Every algorithm module answers (see token_bucket.lua for the contract of each operation):
  prepare(a)                        completes limit a: a bucket's burst, a window's fingerprint
  decide(key, now, a, commit)       fits, remaining, reset, retry, next, batch, from
  refund(key, now, a)               gives back a.cost units, never more than an untouched key has
  pause(key, now, a, till, slots)   holds the budget spent until till
  give_back(key, a, e, er, slot, slots, now)   returns a reservation its waiter gave up
  slot_end(key, a)                  where a reservation left the schedule: e, er
and, for reserve.lua, optionally returned(slots, a, now), holds(key, a, x) and
take(slots, key, a, at, now) (slots given up inside a bucket's schedule), and now_only (a limit
that reserves only what it has now).
--]]

-- The algorithm of each id Java sends (DecideScript.id), the name of its file in algorithms/: the
-- one place an id is named. Adding an algorithm: its file, and its line here. A function, not a
-- table: every call would build the table, while a function's lines cost only when run
local function algorithm(id)
  if id == 1 then return 'token_bucket' end
  if id == 2 then return 'gcra' end
  if id == 3 then return 'sliding_window' end
  if id == 4 then return 'fixed_window' end
  if id == 5 then return 'sliding_log' end
end

-- The operations of each file of algorithms/ this call ran, by its name (empty: a table built with
-- a slot per file costs a call more than growing to the one or two it runs), and the function that
-- runs one, which the composed text that follows this file sets: one branch per file, so that a
-- call creates only the functions of the files it runs
local modules, run_module = {}, nil

local function use(name)
  local m = modules[name]
  if not m then
    m = run_module(name)
    modules[name] = m
  end
  return m
end

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

-- Added to every TTL written: a reservation commits at an instant ahead of the clock, and the
-- TTLs its algorithms compute count from that instant
local ttl_shift = 0

-- A TTL in whole milliseconds, at least 1, shifted as above
local function ttl_ms(ttl_us)
  local ms = cdiv(ttl_us + ttl_shift, 1000)
  if ms < 1 then ms = 1 end
  return int(ms)
end

local function expire(key, ttl_us)
  redis.call('PEXPIRE', key, ttl_ms(ttl_us))
end

-- The second number of a fingerprint 'a,b': the window of a window's fingerprint
local function second(f)
  return tonumber(string.match(f, '^%d+,(%d+)'))
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

-- The time in microseconds: ARGV[1] if a test set it, else the Redis server's clock (TIME);
-- production always sends '', so application clocks never reach a script
local function clock()
  if ARGV[1] ~= '' then return tonumber(ARGV[1]) end
  local time = redis.call('TIME')
  return tonumber(time[1]) * 1000000 + tonumber(time[2])
end

-- A limit's seven values from ARGV[base ..], in DecideScript.encode's order: algorithm id (a key
-- of algorithm above), count, window, perToken, perMicro, capacity, cost; run is its algorithm's
-- module, which completes the limit (prepare). An unknown id fails the call before any key is
-- written.
local function read_limit(base)
  local name = algorithm(tonumber(ARGV[base]))
  if not name then error('unknown algorithm id ' .. ARGV[base], 0) end
  -- every field in the constructor: a table that grows is allocated again
  local l = {
    count = tonumber(ARGV[base + 1]),
    window = tonumber(ARGV[base + 2]),
    per_token = tonumber(ARGV[base + 3]),
    per_micro = tonumber(ARGV[base + 4]),
    capacity = tonumber(ARGV[base + 5]),
    cost = tonumber(ARGV[base + 6]),
    run = use(name),
    burst = false,
    fp = false,
  }
  l.run.prepare(l)
  return l
end
