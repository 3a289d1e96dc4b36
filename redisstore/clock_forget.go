// When this process forgets its line for an origin: the line is only this process's view (its
// waiters, its leases, a few counters), the origin's rules live in Redis, so an idle line goes
// and a crawl through many sites keeps lines for the recent ones only.

package redisstore

import (
	"time"

	"github.com/politecrawl/etiquette/internal/idle"
)

// touch marks ln used at now: it moves to the young end of the clock's list of lines, so that the
// sweep looks at the oldest first; a forgotten line stays out. It requires c.mu held.
func (c *Clock) touch(ln *line, now time.Time) {
	if !ln.forgotten {
		c.lru.Touch(ln, now)
	}
}

// sweep looks at up to idle.SweepBatch of the least recently used lines and forgets those unused for
// Config.ForgetAfter that hold no request of this process: none waiting in it, no lease of it in
// flight. Forgetting changes no start — the schedule, pauses, floors, penalty and give-up stay in
// Redis, and a line made again asks Redis first — but the origin leaves this process's Stats,
// and its generation is learnt anew (Redis losing its data while the line is forgotten is told
// by the other processes' lines and by the crawl's queue, see ErrCrawlLost). A line that still holds a request is looked at again after another
// ForgetAfter. It requires c.mu held.
func (c *Clock) sweep(now time.Time) {
	for range idle.SweepBatch {
		ln := c.lru.Idle(now, c.cfg.ForgetAfter)
		if ln == nil {
			return
		}
		if len(ln.waiting) > 0 || len(ln.leases) > 0 {
			c.lru.Touch(ln, now)
			continue
		}
		c.lru.Remove(ln)
		delete(c.lines, ln.keys.budget)
		ln.forgotten = true
	}
}
