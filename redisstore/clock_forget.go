// When this process forgets its line for an origin: the line is only this process's view (its
// waiters, its leases, a few counters), the origin's rules live in Redis, so an idle line goes
// and a crawl through many sites keeps lines for the recent ones only.

package redisstore

import "time"

// sweepBatch bounds the lines one call looks at for forgetting, as hostclock.Local bounds its
// sweep: more than the one line a call can add, so idle lines go faster than new ones arrive,
// and few enough that no call pays for a scan of every line.
const sweepBatch = 4

// touch marks ln used at now: it moves to the young end of the clock's list of lines, kept in
// order of last use so that the sweep looks at the oldest first. It requires c.mu held.
func (c *Clock) touch(ln *line, now time.Time) {
	ln.used = now
	if ln.forgotten || c.young == ln {
		return
	}
	c.unlink(ln)
	ln.older = c.young
	if c.young != nil {
		c.young.younger = ln
	}
	c.young = ln
	if c.old == nil {
		c.old = ln
	}
}

// unlink takes ln out of the list of lines. It requires c.mu held.
func (c *Clock) unlink(ln *line) {
	if ln.younger != nil {
		ln.younger.older = ln.older
	} else if c.young == ln {
		c.young = ln.older
	}
	if ln.older != nil {
		ln.older.younger = ln.younger
	} else if c.old == ln {
		c.old = ln.younger
	}
	ln.older, ln.younger = nil, nil
}

// sweep looks at up to sweepBatch of the least recently used lines and forgets those unused for
// Config.ForgetAfter that hold no request of this process: none waiting in it, no lease of it in
// flight. Forgetting changes no start — the schedule, pauses, floors, penalty and give-up stay in
// Redis, and a line made again asks Redis first — but the origin leaves this process's Stats,
// and its generation is learnt anew (Redis losing its data while the line is forgotten is told
// by the other processes' lines and by the crawl's queue, see ErrCrawlLost). A line that still holds a request is looked at again after another
// ForgetAfter. It requires c.mu held.
func (c *Clock) sweep(now time.Time) {
	if c.cfg.ForgetAfter < 0 {
		return
	}
	for range sweepBatch {
		ln := c.old
		if ln == nil || now.Sub(ln.used) < c.cfg.ForgetAfter {
			return
		}
		if len(ln.waiting) > 0 || len(ln.leases) > 0 {
			c.touch(ln, now)
			continue
		}
		c.unlink(ln)
		delete(c.lines, ln.keys.budget)
		ln.forgotten = true
	}
}
