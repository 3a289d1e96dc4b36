// What the clock reports about each origin.

package hostclock

import (
	"cmp"
	"slices"
	"time"
)

// OriginStats counts what the clock did for one origin.
type OriginStats struct {
	Origin          string
	Requests        int64         // slots granted
	Waits           int64         // grants that had to wait
	Waited          time.Duration // total time spent waiting
	TooManyRequests int64         // 429 responses
	Unavailable     int64         // 503 responses
	ServerErrors    int64         // other 5xx responses
	TransportErrors int64         // timeouts and connection errors
	Pauses          int64         // pauses started or lengthened (Retry-After, backoff, Clock.Pause)
	GiveUps         int64         // 1 once the origin has been given up
	Refused         int64         // Acquire calls refused after the give-up
	TooLong         int64         // Acquire calls refused because their deadline came before the earliest start
	Expired         int64         // leases reclaimed because Done never came
	Rate            float64       // the current rate, after any 429 penalty
	Floor           time.Duration // the Crawl-delay floor, 0 when none
	ResponseTime    time.Duration // the smoothed response time, 0 before the first response
	LatencyInterval time.Duration // the spacing the response time asks for (it governs when longer than the rate's and the floor's); 0 when off
	Slowdowns       int64         // times the response time began to space the starts more widely than the budget
	PausedUntil     time.Time     // zero when not paused
	GiveUpReason    string
}

// Stats returns the counters of every origin the clock remembers (see [Local] for when it forgets
// one), sorted by key.
func (l *Local) Stats() []OriginStats {
	now := l.cfg.Time.Now()
	l.mu.Lock()
	out := make([]OriginStats, 0, len(l.origins))
	for _, s := range l.origins {
		st := s.st
		st.Rate = s.rate * s.factor
		st.Floor = s.floor
		st.ResponseTime = s.response
		st.LatencyInterval = s.latency
		if s.pauseUntil.After(now) {
			st.PausedUntil = s.pauseUntil
		}
		out = append(out, st)
	}
	l.mu.Unlock()
	slices.SortFunc(out, func(a, b OriginStats) int { return cmp.Compare(a.Origin, b.Origin) })
	return out
}
