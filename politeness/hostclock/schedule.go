// When the next start to an origin may happen: the GCRA schedule, the window rule, the
// Crawl-delay floor, the response time's interval and the pause (interval arithmetic only; no
// waiting, no locking).

package hostclock

import (
	"math"
	"time"
)

// maxWindow bounds the log of recent starts kept per origin (see earliest).
const maxWindow = 64

// rateInterval returns the spacing between starts the origin's current rate asks for, with the
// margins ([Config.Interval]).
func (s *state) rateInterval(c *Config) time.Duration {
	return c.Interval(s.rate * s.factor)
}

// earliest returns the first instant the next start may happen, ignoring concurrency, and the
// rule that sets it: the stricter of the rules listed on [Local].
func (s *state) earliest(c *Config) (time.Time, string) {
	var t time.Time
	why := ""
	later := func(c time.Time, w string) {
		if c.After(t) {
			t, why = c, w
		}
	}
	if !s.last.IsZero() {
		iv := s.rateInterval(c)
		later(s.tat, ReasonRate)
		later(s.last.Add(iv/2), ReasonRate)
		if k := len(s.recent); s.count >= int64(k) {
			later(s.recent[s.count%int64(k)].Add(c.window(k, s.rate*s.factor)), ReasonRate)
		}
		if s.floor > 0 {
			later(s.last.Add(c.floorInterval(s.floor)), ReasonCrawlDelay)
		}
		if s.latency > 0 {
			later(s.last.Add(s.latency), ReasonLatency)
		}
	}
	later(s.pauseUntil, s.pauseWhy)
	return t, why
}

// retime puts the next theoretical start one interval of the current rate after the previous
// start, when the rate changed. It requires l.mu held.
func (s *state) retime(c *Config) {
	if !s.last.IsZero() {
		s.tat = s.last.Add(s.rateInterval(c))
	}
}

// started records a start granted at now that was due at sched (see grant) and returns its
// sequence number. It requires l.mu held.
func (s *state) started(now, sched time.Time, c *Config) int64 {
	s.tat = sched.Add(s.rateInterval(c))
	s.last = now
	if s.recent == nil {
		s.recent = make([]time.Time, min(maxWindow, max(1, int(math.Ceil(s.rate)))))
	}
	seq := s.count
	s.recent[seq%int64(len(s.recent))] = now
	s.count++
	return seq
}

// sent moves the recorded start of request seq to at, when at is later and the entry has not
// been overwritten since. It requires l.mu held.
func (s *state) sent(seq int64, at time.Time) {
	if s.count-seq > int64(len(s.recent)) {
		return
	}
	if i := seq % int64(len(s.recent)); at.After(s.recent[i]) {
		s.recent[i] = at
	}
	if seq == s.count-1 && at.After(s.last) {
		s.last = at
	}
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}
