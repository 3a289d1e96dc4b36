// How a process notices that the state it relied on vanished from Redis — a restart without
// persistence, a flush, an eviction — before it costs the site: every origin's keys carry a
// generation that the scripts check in the same call as each reservation.

package redisstore

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
)

// ErrStateLost is what every operation of a [Store] returns, wrapped in a [*LostError], once this
// process noticed that state it relied on vanished from Redis. errors.Is also finds
// [ErrCrawlLost] in it.
var ErrStateLost = errors.New("redisstore: the crawl's state vanished from Redis")

// LostError says which state vanished. Every operation of the store fails with it from then on:
// the start schedules, the leases and the de-duplication the process relied on are gone, so
// carrying on would start requests closer together than the budget allows and fetch pages again.
type LostError struct {
	URL    string // the Redis server, without its password
	Origin string // the origin (host[:port]) whose state was found gone; "" for the crawl as a whole
	What   string // which state: "the start schedule", "the queue", "the crawl"
}

func (e *LostError) Error() string {
	of := "the crawl"
	if e.Origin != "" {
		of = e.Origin
	}
	return fmt.Sprintf("redisstore: %s of %s vanished from Redis at %s (a restart without its data, a flush, or an eviction); "+
		"this process sends nothing more, because the budget and the de-duplication it relied on are gone: "+
		"give Redis persistence (appendonly yes) and maxmemory-policy noeviction, then start the crawl again",
		e.What, of, e.URL)
}

// Is makes errors.Is find ErrStateLost and ErrCrawlLost.
func (e *LostError) Is(target error) bool { return target == ErrStateLost || target == ErrCrawlLost }

// luaGeneration is the generation check every reserving script runs first (prepended by
// luaCommon).
const luaGeneration = `
-- generation checks KEY's generation against the one the process knows. A process that knows
-- none ('') has relied on nothing here yet: it takes the key's, creating it from fresh when
-- there is none. A process that knows one must find it: a missing or different generation
-- means the state it relied on was lost, and nil is returned. The key lives ttl ms past its
-- last use, as the state it stands for.
local function generation(key, known, fresh, ttl)
  local g = redis.call('GET', key)
  if not g then
    if known ~= '' then return nil end
    g = fresh
    redis.call('SET', key, g, 'PX', ttl)
  elseif known ~= '' and g ~= known then
    return nil
  else
    redis.call('PEXPIRE', key, ttl)
  end
  return g
end
`

// newGeneration returns a fresh generation value.
func newGeneration() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
