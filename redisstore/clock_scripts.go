// The shared start schedule's decisions, each one Lua script: it reads an origin's state, decides,
// writes with an expiry and returns everything the caller needs, in one round trip and one slot.

package redisstore

import "github.com/redis/go-redis/v9"

// Why our own scripts and not go-redis/redis_rate: redis_rate decides "n per period" with a
// token bucket under a fixed "rate:" key prefix. The host clock needs more in the same atomic
// step: a concurrency cap held as leases that expire; robots.txt ahead of pages; a window rule
// counted from when requests reached the server (Lease.Sent), not from when they were allowed;
// Crawl-delay floors and pauses; and the 429 penalty that changes the rate. Each of those reads
// or writes the schedule, so it must be decided in the same script as the schedule.
//
// The rules are hostclock.Local's (schedule.go, learning.go, latency.go), applied to state kept
// in Redis: see the comments there for why each one exists. Times are microseconds of the Redis
// server's clock (TIME), so the processes' clocks may disagree without harm; durations cross
// the wire as microseconds and are turned back into local times against the reply's arrival.
// Lua numbers are doubles: microseconds since 1970 stay exact until the year 2255.

// luaCommon is prepended to every script.
const luaCommon = luaHelpers + luaGeneration

// luaHelpers are the scripts' shared helpers.
const luaHelpers = `
local function now_us()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000000 + tonumber(t[2])
end
local function num(v, d)
  if v then return tonumber(v) end
  return d
end
-- int formats a whole number exactly: Lua's own number-to-string keeps 14 digits, too few for
-- microseconds since 1970.
local function int(x)
  return string.format('%d', x)
end
-- pause_of returns the end (µs) and reason of the pause in force, 0 and '' when none.
local function pause_of(key)
  local v = redis.call('GET', key)
  if not v then return 0, '' end
  local u, w = string.match(v, '^(%d+) (.*)$')
  return tonumber(u), w
end
-- interval_us is hostclock.Config.Interval in µs, unrounded: the spacing of starts at r per second
-- (after any 429 penalty) is the stricter of 1/r lengthened by margin and (1 s lengthened by
-- margin, + jitter µs) / ceil(r); a rate that is not positive gets the floor's cap (MaxFloor).
local function interval_us(r, margin, jitter, cap)
  if not (r > 0) or r == math.huge then return cap end
  return math.max(1e6 / r * (1 + margin), (1e6 * (1 + margin) + jitter) / math.ceil(r))
end
-- floor_interval_us is hostclock's floorInterval in µs: a Crawl-delay of floor µs spaces starts by
-- the stricter of the floor lengthened by margin and the floor + jitter µs.
local function floor_interval_us(floor, margin, jitter)
  if floor <= 0 then return 0 end
  return math.max(floor * (1 + margin), floor + jitter)
end
-- floor_us returns the Crawl-delay floor in force: the largest unexpired source's, capped.
local function floor_us(key, now, cap)
  local f = 0
  local kv = redis.call('HGETALL', key)
  for i = 1, #kv, 2 do
    local iv, exp = string.match(kv[i + 1], '^(%d+) (%d+)$')
    if iv and tonumber(exp) > now then f = math.max(f, tonumber(iv)) end
  end
  return math.min(f, cap)
end
`

// acquireScript grants a start slot, or says when to ask again (hostclock.Local.earliest, check
// and grant).
//
//	KEYS  clock, leases, pause, floors, robotsfirst, gaveup, stats, generation
//	ARGV  one JSON object (acquireArgs): mode ("grant" | "peek"), lease (its id), rate
//	      (configured, before any 429 penalty), concurrency, margin, jitter_margin µs, floor_cap
//	      µs, robots,
//	      since µs (how long this request has been first in line with a place free),
//	      lease_expiry µs, deadline µs (-1: none), state_ttl ms, stats_ttl ms, waited µs (-1: the
//	      request has not waited), generation (the one the process knows, '' for none), fresh
//	      (the generation to create when there is none)
//	→ {code, now, at, reason, seq, expired, generation}
//	  code 0 granted: seq is the start's sequence number; expired, the leases swept
//	       1 not yet: ask again at (server µs), for reason
//	       2 the deadline comes before the earliest start, at
//	       3 the origin was given up for this crawl at, for reason
//	       4 peek: the earliest start is at; nothing reserved
//	       5 the origin's state vanished: nothing is decided (see generation.go)
//
// The interval is hostclock.Config.Interval of the rate after the 429 penalty (interval_us). The
// earliest start is the latest of: the GCRA theoretical time (tat); half an interval after the
// latest start; the window — the rate's K-th previous start plus K whole intervals, K =
// ceil(rate) ≤ 64, from the ring r0…r63 of starts by sequence number, each moved to when the
// request reached the server (sentScript); the Crawl-delay floor with its margins
// (floor_interval_us) and the response-time interval after the latest start; and the pause. A robots.txt request that waits marks the
// origin (robotsfirst) so that no page of any process goes ahead of it.
var acquireScript = redis.NewScript(luaCommon + `
local a = cjson.decode(ARGV[1])
local now = now_us()
local gen = generation(KEYS[8], a.generation, a.fresh, a.state_ttl)
if not gen then return {5, now, 0, '', 0, 0, ''} end
local g = redis.call('GET', KEYS[6])
if g then
  local at, why = string.match(g, '^(%d+) (.*)$')
  return {3, now, tonumber(at), why, 0, 0, gen}
end
local rate, margin, jitter, cap = a.rate, a.margin, a.jitter_margin, a.floor_cap
local expired = 0
if a.mode == 'grant' then expired = redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now) end
if expired > 0 then
  redis.call('HINCRBY', KEYS[7], 'expired', expired)
  redis.call('PEXPIRE', KEYS[7], a.stats_ttl)
end

local st = redis.call('HMGET', KEYS[1], 'tat', 'last', 'count', 'factor', 'latency', 'paused')
local tat, last, count = num(st[1], 0), num(st[2], 0), num(st[3], 0)
local factor, latency, paused = num(st[4], 1), num(st[5], 0), num(st[6], 0)
local iv = interval_us(rate * factor, margin, jitter, cap)

local e, why = 0, ''
local function later(c, w)
  if c > e then e, why = c, w end
end
if last > 0 then
  later(tat, 'rate')
  later(last + iv / 2, 'rate')
  local k = math.min(64, math.max(1, math.ceil(rate)))
  if count >= k then
    later(num(redis.call('HGET', KEYS[1], 'r' .. ((count - k) % 64)), 0) + k * iv, 'rate')
  end
  local floor = floor_us(KEYS[4], now, cap)
  if floor > 0 then later(last + floor_interval_us(floor, margin, jitter), 'crawl-delay') end
  if latency > 0 then later(last + latency, 'latency') end
end
local pu, pw = pause_of(KEYS[3])
later(pu, pw)
e = math.ceil(e)

if a.deadline >= 0 and e - now > a.deadline then return {2, now, e, why, 0, 0, gen} end
if a.mode == 'peek' then return {4, now, e, why, 0, 0, gen} end

if not a.robots and redis.call('EXISTS', KEYS[5]) == 1 then
  if why == '' then why = 'rate' end
  return {1, now, math.max(e, now + 100000), why, 0, expired, gen}
end
local function mark(at)
  if a.robots then redis.call('SET', KEYS[5], '1', 'PX', math.ceil((at - now) / 1000) + 1000) end
end
if redis.call('ZCARD', KEYS[2]) >= a.concurrency then
  local first = tonumber(redis.call('ZRANGE', KEYS[2], 0, 0, 'WITHSCORES')[2])
  mark(first)
  return {1, now, math.max(e, first), 'concurrency', 0, expired, gen}
end
if e > now then
  mark(e)
  return {1, now, e, why, 0, expired, gen}
end

-- The start was due when the rules first allowed it and the request was first in line with a
-- place free; the next one is due one interval after that. After a pause the schedule restarts
-- from this start.
local due = math.max(e, now - a.since)
if due <= 0 or due > now or paused > last then due = now end
redis.call('HSET', KEYS[1], 'tat', math.ceil(due + iv), 'last', now, 'count', count + 1, 'r' .. (count % 64), now)
redis.call('PEXPIRE', KEYS[1], a.state_ttl)
redis.call('ZADD', KEYS[2], now + a.lease_expiry, a.lease)
redis.call('PEXPIRE', KEYS[2], math.ceil(a.lease_expiry / 1000) + 1000)
if a.robots then redis.call('DEL', KEYS[5]) end
redis.call('HINCRBY', KEYS[7], 'requests', 1)
if a.waited >= 0 then
  redis.call('HINCRBY', KEYS[7], 'waits', 1)
  redis.call('HINCRBY', KEYS[7], 'waited', a.waited)
end
redis.call('PEXPIRE', KEYS[7], a.stats_ttl)
return {0, now, now, '', count, expired, gen}
`)

// sentScript records that start seq reached the server now (hostclock.Local's sent): its entry in
// the ring, and the latest start when it is the latest.
//
//	KEYS  clock
//	ARGV  seq
//	→ now
var sentScript = redis.NewScript(luaCommon + `
local now = now_us()
local seq = tonumber(ARGV[1])
local count = num(redis.call('HGET', KEYS[1], 'count'), 0)
if seq >= count or count - seq > 64 then return now end
local f = 'r' .. (seq % 64)
if now > num(redis.call('HGET', KEYS[1], f), 0) then redis.call('HSET', KEYS[1], f, now) end
if seq == count - 1 and now > num(redis.call('HGET', KEYS[1], 'last'), 0) then
  redis.call('HSET', KEYS[1], 'last', now)
end
return now
`)

// doneScript frees a lease and applies its outcome (hostclock.Local's done, learn and observe).
//
//	KEYS  clock, leases, pause, floors, gaveup, stats, generation
//	ARGV  one JSON object (doneArgs):
//	        lease            the lease's id
//	        generation       the origin's generation the lease was granted under
//	        status           the response's status (0: none)
//	        retry_after      µs, 0: none
//	        class            "ok" | "throttled" | "transient" | "neutral"
//	        max_retry_after  µs: a longer Retry-After gives the origin up
//	        error_budget     failures in a row that give the origin up
//	        recover_after    successes in a row after which a 429 penalty eases
//	        took             µs: the response time, -1 when it is not a response to time
//	        latency_factor   -1: the response time does not space the starts
//	        floor_cap, margin, jitter_margin (µs), rate, state_ttl (ms), stats_ttl (ms, the
//	        give-up's too)
//	        freed            the channel a freed place is published on
//	        giveup_retry_after, giveup_budget   the give-up's reason for either cause
//	        penalty, min_factor, recover_step   the 429 penalty, its floor and its recovery step
//	        counts           the stats fields the outcome counts in (too_many, unavailable, …)
//	        backoff          µs: the pause after the 1st, 2nd, … failure in a row
//	→ {held, pause until (0: none), pause reason (the give-up's reason when it gave up), gave up,
//	   recovered, rate, pace, latency µs, response µs, now, lost}
//
// held is 0 when the lease had expired: its place was already freed and its response time says
// more about the caller than the server. pace is 1 when the response time began to space the
// starts, 0 when it stopped, -1 when nothing changed. lost is 1 when the origin's state vanished
// since the grant: nothing is written. A freed place is published on the freed channel, which
// wakes the processes waiting for one.
var doneScript = redis.NewScript(luaCommon + `
local a = cjson.decode(ARGV[1])
local now = now_us()
if not generation(KEYS[7], a.generation, '', a.state_ttl) then
  return {0, 0, '', 0, 0, tostring(a.rate), -1, 0, 0, now, 1}
end
local held = redis.call('ZREM', KEYS[2], a.lease)
if held == 1 then redis.call('PUBLISH', a.freed, '') end
local rate, margin, jitter, cap = a.rate, a.margin, a.jitter_margin, a.floor_cap
local st = redis.call('HMGET', KEYS[1], 'factor', 'fails', 'okrun', 'last', 'resp', 'slowed', 'latency')
local factor, fails, okrun, last = num(st[1], 1), num(st[2], 0), num(st[3], 0), num(st[4], 0)
local resp, slowed, latency = num(st[5], 0), st[6] == '1', num(st[7], 0)
local out_until, out_why, gave, recovered, pace = 0, '', 0, 0, -1
local function tally(field)
  redis.call('HINCRBY', KEYS[6], field, 1)
  redis.call('PEXPIRE', KEYS[6], a.stats_ttl)
end
for _, f in ipairs(a.counts) do tally(f) end

local function retime()
  if last > 0 then redis.call('HSET', KEYS[1], 'tat', math.ceil(last + interval_us(rate * factor, margin, jitter, cap))) end
end
local function pause(untl, why)
  if untl <= pause_of(KEYS[3]) then return end
  redis.call('SET', KEYS[3], int(untl) .. ' ' .. why, 'PXAT', math.ceil(untl / 1000))
  redis.call('HSET', KEYS[1], 'paused', untl)
  out_until, out_why = untl, why
  tally('pauses')
end
local function give_up(reason)
  redis.call('SET', KEYS[5], int(now) .. ' ' .. reason, 'PX', a.stats_ttl)
  gave, out_why = 1, reason
  tally('giveups')
end

if redis.call('EXISTS', KEYS[5]) == 0 and a.class ~= 'neutral' then
  local status, ra = a.status, a.retry_after
  -- Retry-After counts on 429 (RFC 6585 §4), on 503 and every other 5xx, and on 3xx
  -- (RFC 9110 §10.2.3).
  local counts = ra > 0 and (status == 429 or status >= 500 or (status >= 300 and status < 400))
  if counts and ra > a.max_retry_after then
    give_up(a.giveup_retry_after)
  elseif a.class == 'ok' then
    fails = 0
    if factor < 1 then
      okrun = okrun + 1
      if okrun >= a.recover_after then
        factor, okrun, recovered = math.min(1, factor * a.recover_step), 0, 1
        retime()
      end
    end
    if counts then pause(now + ra, 'retry-after') end
  else
    fails, okrun = fails + 1, 0
    if status == 429 then
      factor = math.max(a.min_factor, factor * a.penalty)
      retime()
    end
    if fails >= a.error_budget then
      give_up(a.giveup_budget)
    elseif counts then
      pause(now + ra, 'retry-after')
    else
      pause(now + (a.backoff[fails] or 0), 'backoff')
    end
  end
  redis.call('HSET', KEYS[1], 'factor', factor, 'fails', fails, 'okrun', okrun)

  if held == 1 and a.took >= 0 and gave == 0 then
    -- A slower answer counts at once, a faster one halfway (hostclock's observe).
    if a.took >= resp then resp = a.took else resp = resp - math.floor((resp - a.took) / 2) end
    redis.call('HSET', KEYS[1], 'resp', resp)
    if a.latency_factor >= 0 then
      latency = math.floor(math.min(math.floor(a.latency_factor * resp), cap) * (1 + margin))
      local budget = math.max(interval_us(rate * factor, margin, jitter, cap),
        floor_interval_us(floor_us(KEYS[4], now, cap), margin, jitter))
      local s = latency > budget
      if s ~= slowed then
        if s then
          pace = 1
          tally('slowdowns')
        else
          pace = 0
        end
      end
      local sv = '0'
      if s then sv = '1' end
      redis.call('HSET', KEYS[1], 'latency', latency, 'slowed', sv)
    end
  end
  redis.call('PEXPIRE', KEYS[1], a.state_ttl)
end
return {held, out_until, out_why, gave, recovered, tostring(rate * factor), pace, latency, resp, now, 0}
`)

// pauseScript lengthens the origin's pause (hostclock.Local's Pause); a shorter one changes
// nothing.
//
//	KEYS  pause, clock
//	ARGV  duration µs from now, reason, state ttl ms
//	→ {changed, now, until}
var pauseScript = redis.NewScript(luaCommon + `
local now = now_us()
local d = tonumber(ARGV[1])
local cur = pause_of(KEYS[1])
local untl = now + d
if d <= 0 or untl <= cur then return {0, now, cur} end
redis.call('SET', KEYS[1], int(untl) .. ' ' .. ARGV[2], 'PXAT', math.ceil(untl / 1000))
redis.call('HSET', KEYS[2], 'paused', untl)
redis.call('PEXPIRE', KEYS[2], ARGV[3])
return {1, now, untl}
`)

// floorScript records one source's Crawl-delay, or withdraws it (interval ≤ 0).
//
//	KEYS  floors
//	ARGV  source, interval µs, lifetime µs, floor cap µs
//	→ the floor in force, µs
var floorScript = redis.NewScript(luaCommon + `
local now = now_us()
local life = tonumber(ARGV[3])
if tonumber(ARGV[2]) <= 0 then
  redis.call('HDEL', KEYS[1], ARGV[1])
else
  redis.call('HSET', KEYS[1], ARGV[1], ARGV[2] .. ' ' .. int(now + life))
  redis.call('PEXPIRE', KEYS[1], math.ceil(life / 1000))
end
return floor_us(KEYS[1], now, tonumber(ARGV[4]))
`)

// renewScript extends this process's leases of one origin that are still held.
//
//	KEYS  leases
//	ARGV  lease expiry µs, lease id…
//	→ the number renewed
var renewScript = redis.NewScript(luaCommon + `
local now = now_us()
local exp = tonumber(ARGV[1])
local n = 0
for i = 2, #ARGV do
  if redis.call('ZSCORE', KEYS[1], ARGV[i]) then
    redis.call('ZADD', KEYS[1], now + exp, ARGV[i])
    n = n + 1
  end
end
if n > 0 then redis.call('PEXPIRE', KEYS[1], math.ceil(exp / 1000) + 1000) end
return n
`)

// statusScript reads what the origin's state says now, for Stats and PausedUntil.
//
//	KEYS  clock, pause, floors, gaveup
//	ARGV  rate, floor cap µs
//	→ {now, give-up reason ('' when none), pause until (0: none), pause reason, rate, floor µs,
//	   response µs, latency µs}
var statusScript = redis.NewScript(luaCommon + `
local now = now_us()
local g = redis.call('GET', KEYS[4])
local gave = ''
if g then gave = string.match(g, '^%d+ (.*)$') end
local pu, pw = pause_of(KEYS[2])
local st = redis.call('HMGET', KEYS[1], 'factor', 'resp', 'latency')
local cap = tonumber(ARGV[2])
return {now, gave, pu, pw, tostring(tonumber(ARGV[1]) * num(st[1], 1)), floor_us(KEYS[3], now, cap), num(st[2], 0), num(st[3], 0)}
`)
