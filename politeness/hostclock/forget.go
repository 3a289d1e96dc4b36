// When the in-process clock forgets an origin: only once nothing about it can still hold back a
// start, so that an origin forgotten and used again gets exactly the starts it would have got.

package hostclock

import (
	"time"

	"github.com/politecrawl/etiquette/internal/idle"
)

// DefaultForgetAfter is Config.ForgetAfter when it is 0: an origin nothing has happened to for
// a minute — no request waiting or in flight, no pause, Crawl-delay, 429 penalty, run of errors
// or slowdown in force — is forgotten, and costs nothing until it is used again.
const DefaultForgetAfter = time.Minute

// sweep forgets up to idle.SweepBatch of the least recently used origins unused for
// Config.ForgetAfter that nothing holds (see forgettable); one that something still holds is
// looked at again after another ForgetAfter. It requires l.mu held.
func (l *Local) sweep(now time.Time) {
	for range idle.SweepBatch {
		s := l.lru.Idle(now, l.cfg.ForgetAfter)
		if s == nil {
			return
		}
		if !l.forgettable(s, now) {
			l.lru.Touch(s, now)
			continue
		}
		l.lru.Remove(s)
		delete(l.origins, s.key)
		s.forgotten = true
	}
}

// forgettable reports whether forgetting s changes no start to come: nothing waits or is in
// flight, no pause holds, no Crawl-delay, 429 penalty, run of failures (which counts toward the
// error budget) or slowdown is in force, the origin has not been given up, and every rule of the
// schedule would let a start happen now — the interval, the Crawl-delay and the response time's
// spacing since the last start, and the window of its latest starts. A fresh state allows a
// start at once and counts its window from it, so it allows no start the old one would not have.
// It requires l.mu held.
func (l *Local) forgettable(s *state, now time.Time) bool {
	l.expire(s, now)
	if len(s.queue) > 0 || len(s.leases) > 0 || s.gaveUp != nil || s.pauseUntil.After(now) ||
		len(s.floors) > 0 || s.factor != 1 || s.fails > 0 || s.slowed {
		return false
	}
	if at, _ := s.earliest(&l.cfg); now.Before(at) {
		return false
	}
	if k := len(s.recent); k > 0 {
		w := l.cfg.window(k, s.rate)
		for _, t := range s.recent {
			if now.Before(t.Add(w)) {
				return false
			}
		}
	}
	return true
}
