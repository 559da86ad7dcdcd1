--[[
Sluice: take one concurrency lease (algorithm=concurrency), atomically, in one round trip.

KEYS[1]   the caller's leases of one policy: sluice:{<caller>}:<policy>:cc, a sorted set whose
          members are lease ids and whose scores are their expiries (microseconds)
ARGV[1]   the time in microseconds, or '' to read the Redis server's clock (TIME); production
          always sends ''
ARGV[2]   count: the most leases held at once
ARGV[3]   lease: how long a lease lives, microseconds
ARGV[4]   this lease's id, unique among every instance sharing this Redis

Returns   { allowed, remaining, reset_us, retry_us, next_us }: the leases left after this one,
          never negative; the time until the last lease held expires (every place back, at the
          latest) and until the next place is back at the latest: the oldest lease's expiry, or,
          when more leases are held than count, the expiry that brings them below count; a
          refusal's retry is the latter, at most one second, because leases are usually returned
          long before they expire.

Expired leases (score <= now) are trimmed first, so an instance that died mid-request holds its
leases at most one lease long. The key's TTL is the time until its last lease expires. A lease is
returned with ZREM of its id: returning an expired or returned lease does nothing. The Java twin
is LeaseTable in dev.sluice.memory.

A changed cap (a redeploy) reads the leases held as they are. A lowered count refuses the caller
(remaining 0) until its leases held, taken under the old count, are returned or expire below the
new one; a raised count admits at once. A shortened lease bounds the leases held: none expires
later than one lease from now. A lengthened lease extends none.
--]]

local key = KEYS[1]
local now
if ARGV[1] ~= '' then
  now = tonumber(ARGV[1])
else
  local time = redis.call('TIME')
  now = tonumber(time[1]) * 1000000 + tonumber(time[2])
end
local count = tonumber(ARGV[2])
local lease = tonumber(ARGV[3])

redis.call('ZREMRANGEBYSCORE', key, '-inf', string.format('%d', now))
local latest = now + lease
local last = redis.call('ZRANGE', key, -1, -1, 'WITHSCORES')[2]
if last then last = tonumber(last) end
local bounded = last ~= nil and last > latest
if bounded then
  -- taken under a longer lease: bounded by this one
  local over = redis.call('ZRANGEBYSCORE', key, '(' .. string.format('%d', latest), '+inf')
  for i = 1, #over do
    redis.call('ZADD', key, string.format('%d', latest), over[i])
  end
  last = latest
end
local held = redis.call('ZCARD', key)
local fits = held < count
if fits then
  redis.call('ZADD', key, string.format('%d', latest), ARGV[4])
  held = held + 1
end
local reset, nxt = 0, 0
if held > 0 then
  -- the next place: when the oldest lease expires, or, over a lowered count, the one that brings
  -- the leases held below it
  local first = 0
  if held > count then first = held - count end
  nxt = tonumber(redis.call('ZRANGE', key, first, first, 'WITHSCORES')[2]) - now
  -- the last lease: the one just taken, which expires last, or the last one held
  if fits then reset = lease else reset = last - now end
  if fits or bounded then
    local ms = math.ceil(reset / 1000)
    if ms < 1 then ms = 1 end
    redis.call('PEXPIRE', key, string.format('%d', ms))
  end
end
local retry = 0
if not fits then
  retry = nxt
  if retry > 1000000 then retry = 1000000 end
end
local allowed = 0
if fits then allowed = 1 end
local remaining = count - held
if remaining < 0 then remaining = 0 end
return { allowed, remaining, reset, retry, nxt }
