// How an origin's response time spaces its starts: a server that answers slowly is asked less
// often, and gets its budget back gradually as it speeds up again.

package hostclock

import "time"

// DefaultLatencyFactor is Config.LatencyFactor when it is 0: the starts to an origin are spaced
// by at least twice its smoothed response time, so that it serves no more than about one of our
// requests at a time at half its pace.
const DefaultLatencyFactor = 2

// Pace is a change in how an origin's starts are spaced because of its response time, reported
// through [Lease.Paced] and logged: its answers became slow enough that the response time spaces
// the starts more widely than the budget and the Crawl-delay do, or fast enough again that they
// no longer do.
type Pace struct {
	Slowed       bool          // true: the response time now spaces the starts; false: the budget does again
	Interval     time.Duration // the spacing the response time asks for: LatencyFactor × ResponseTime, capped, with the margin
	ResponseTime time.Duration // the origin's smoothed response time
}

// observe folds one response time into s's smoothed one, re-derives the interval it asks for, and
// returns the change of pace to report, if any. It requires l.mu held.
//
// The smoothed time follows a slower answer at once and moves halfway towards a faster one, as
// Scrapy's AutoThrottle does: the origin is relieved as soon as it struggles, and gets its budget
// back over several answers (from 1.5 s to 100 ms answers, five), never in one jump. A response
// time only ever lengthens the interval; fast answers cannot raise the rate above the budget.
func (l *Local) observe(s *state, took time.Duration) *Pace {
	took = max(took, 0)
	if took >= s.response {
		s.response = took
	} else {
		s.response -= (s.response - took) / 2
	}
	if l.cfg.LatencyFactor < 0 {
		return nil
	}
	iv := min(time.Duration(l.cfg.LatencyFactor*float64(s.response)), l.cfg.MaxFloor)
	s.latency = time.Duration(float64(iv) * (1 + l.cfg.Margin))
	budget := max(s.rateInterval(&l.cfg), l.cfg.floorInterval(s.floor))
	if slowed := s.latency > budget; slowed != s.slowed {
		s.slowed = slowed
		if slowed {
			s.st.Slowdowns++
		}
		return &Pace{Slowed: slowed, Interval: s.latency, ResponseTime: s.response}
	}
	return nil
}
