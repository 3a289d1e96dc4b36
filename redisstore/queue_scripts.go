// The shared queue's decisions, each one Lua script on one origin's keys (one slot).

package redisstore

import "github.com/redis/go-redis/v9"

// queueScripts share the clock scripts' helpers (now_us, int).
var (
	// enqueueScript appends an entry unless its URL was accepted before or the queue is full.
	//
	//	KEYS  queue, seen, generation
	//	ARGV  URL hash, entry, limit (0: none), crawl idle ms, the generation the process knows
	//	      ('' for none), a fresh one
	//	→ {0 queued | 1 duplicate | 2 dropped | 3 the origin's queue vanished, generation}
	enqueueScript = redis.NewScript(luaCommon + `
local gen = generation(KEYS[3], ARGV[5], ARGV[6], ARGV[4])
if not gen then return {3, ''} end
if redis.call('SISMEMBER', KEYS[2], ARGV[1]) == 1 then return {1, gen} end
local limit = tonumber(ARGV[3])
if limit > 0 and redis.call('LLEN', KEYS[1]) >= limit then return {2, gen} end
redis.call('SADD', KEYS[2], ARGV[1])
redis.call('RPUSH', KEYS[1], ARGV[2])
redis.call('PEXPIRE', KEYS[1], ARGV[4])
redis.call('PEXPIRE', KEYS[2], ARGV[4])
return {0, gen}
`)

	// takeScript hands out the oldest entry under a lease, after putting back at the head the
	// entries whose leases expired (their count of hand-outs raised by one).
	//
	//	KEYS  queue, taken, generation
	//	ARGV  take id, lease expiry µs, crawl idle ms, the generation the process knows ('' for
	//	      none), a fresh one
	//	→ {0, generation} when the queue is empty, {0, generation, entry, member} when taken,
	//	  {3, ''} when the origin's queue vanished
	takeScript = redis.NewScript(luaCommon + `
local gen = generation(KEYS[3], ARGV[4], ARGV[5], ARGV[3])
if not gen then return {3, ''} end
local now = now_us()
local stale = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', now)
for i = #stale, 1, -1 do
  local n, rest = string.match(stale[i], '^[^\n]*\n(%d+)\n(.*)$')
  if n then redis.call('LPUSH', KEYS[1], int(tonumber(n) + 1) .. '\n' .. rest) end
end
if #stale > 0 then redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now) end
local e = redis.call('LPOP', KEYS[1])
if not e then return {0, gen} end
local member = ARGV[1] .. '\n' .. e
redis.call('ZADD', KEYS[2], now + tonumber(ARGV[2]), member)
redis.call('PEXPIRE', KEYS[2], ARGV[3])
return {0, gen, e, member}
`)

	// sizeScript counts the entries waiting, with those whose leases expired (they wait too).
	//
	//	KEYS  queue, taken
	//	→ {waiting, taken and still held}
	sizeScript = redis.NewScript(luaCommon + `
local now = now_us()
local expired = redis.call('ZCOUNT', KEYS[2], '-inf', now)
return {redis.call('LLEN', KEYS[1]) + expired, redis.call('ZCARD', KEYS[2]) - expired}
`)

	// renewTakenScript extends this process's leases on the entries it holds.
	//
	//	KEYS  taken
	//	ARGV  lease expiry µs, member…
	renewTakenScript = redis.NewScript(luaCommon + `
local now = now_us()
for i = 2, #ARGV do
  if redis.call('ZSCORE', KEYS[1], ARGV[i]) then redis.call('ZADD', KEYS[1], now + tonumber(ARGV[1]), ARGV[i]) end
end
return 0
`)
)
