package politeness

// This file decides what the door counts, from its event stream.

import (
	"maps"
	"strings"
	"sync"

	"github.com/politecrawl/etiquette/politeness/events"
)

// Stats counts what a door decided. It subscribes to the door's event stream, so it never
// disagrees with the log or the CLI's output.
type Stats struct {
	mu sync.Mutex
	s  StatsSnapshot
}

// StatsSnapshot is a copy of the counters at one moment.
type StatsSnapshot struct {
	Admitted  int
	Responses int
	ByStatus  map[int]int
	Refused   map[string]int // by reason: robots, budget, error
	Cache     map[string]int // miss, fresh, revalidated, stale
	Waits     map[string]int // by reason: rate, crawl-delay, retry-after, backoff, concurrency
	Pauses    int
	Retries   int
	Truncated int
	Bytes     int64
	// CacheBytesSaved counts the body bytes the cache served that the site did not have to send.
	CacheBytesSaved int64
	// CookiesRefused counts the cookies not kept, one per Set-Cookie line of every answer the
	// site sent (304s and retried 429s included), by category ("analytics", "consent", "session",
	// "unknown", …; cookies.Category.String) or, for a cookie a purpose would keep but its
	// attributes forbid, by reason ("foreign-domain", "partitioned", …; see cookies.Refusal), and
	// "malformed" for a line net/http cannot parse. Without a cookie purpose every cookie a site
	// sets is refused and counted here. [StatsSnapshot.CookiesRefusedTotal] sums them.
	CookiesRefused map[string]int
}

func newStats() *Stats {
	return &Stats{s: StatsSnapshot{ByStatus: map[int]int{}, Refused: map[string]int{}, Cache: map[string]int{},
		Waits: map[string]int{}, CookiesRefused: map[string]int{}}}
}

func (st *Stats) record(e events.Event) {
	st.mu.Lock()
	defer st.mu.Unlock()
	switch e.Type {
	case events.Admitted:
		st.s.Admitted++
	case events.Response:
		st.s.Responses++
		st.s.ByStatus[e.Status]++
		if e.Cache != "" {
			st.s.Cache[e.Cache]++
		}
		st.s.Bytes += e.Bytes
		if e.Truncated {
			st.s.Truncated++
		}
	case events.Refused:
		st.s.Refused[e.Reason]++
	case events.Waited:
		st.s.Waits[e.Reason]++
	case events.Paused:
		st.s.Pauses++
	case events.Retried:
		st.s.Retries++
	case events.Notice:
		if e.Reason == cookieRefused {
			category, _, _ := strings.Cut(e.Detail, ":")
			st.s.CookiesRefused[category]++
		}
	}
}

// CookiesRefusedTotal is the number of cookies refused, all categories and reasons together.
func (s StatsSnapshot) CookiesRefusedTotal() int {
	n := 0
	for _, c := range s.CookiesRefused {
		n += c
	}
	return n
}

func (st *Stats) snapshot() StatsSnapshot {
	st.mu.Lock()
	defer st.mu.Unlock()
	c := st.s
	c.ByStatus = maps.Clone(st.s.ByStatus)
	c.Refused = maps.Clone(st.s.Refused)
	c.Cache = maps.Clone(st.s.Cache)
	c.Waits = maps.Clone(st.s.Waits)
	c.CookiesRefused = maps.Clone(st.s.CookiesRefused)
	return c
}
