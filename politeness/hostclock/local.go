// Local, the in-memory clock: its per-origin state and the rules callers set on it
// (authorisation, Crawl-delay floor, pause).

package hostclock

import (
	"cmp"
	"github.com/politecrawl/etiquette/internal/idle"
	"log/slog"
	"maps"
	"sync"
	"time"

	"github.com/politecrawl/etiquette/internal/quietlog"
)

// Local is the in-process [Clock]: one schedule per origin, kept in memory for the life of the
// clock. Create it with [NewLocal]; the zero value is not usable. Most callers use [Shared] through
// [Layer] and never call its methods.
//
// A request to an origin starts when it is first in line (robots.txt requests go ahead of pages),
// fewer than Config.Concurrency requests are in flight, and every one of these rules allows it —
// the stricter wins:
//   - the GCRA schedule (burst 1): the theoretical time of the next start, one interval after the
//     previous theoretical time — so a start that a busy machine granted a little late does not
//     push back every later one, and the rate achieved is the configured one;
//   - the window: the K-th previous start (K = the rate rounded up, at most 64) plus K whole
//     intervals, counted from when those requests left (Lease.Sent, else the grant), so that
//     however late some starts were granted or sent, and however the schedule catches up, K+1
//     consecutive starts span at least 1 s + Config.JitterMargin: a server's log holds no more
//     than the rate in any second while the way to it delays requests by up to the jitter
//     margin. Only a start late by more than that pushes a later one back;
//   - half an interval after the previous actual start, so a late start is not followed by one
//     right behind it;
//   - the Crawl-delay floor after the previous actual start (it is a minimum gap by definition);
//   - Config.LatencyFactor times the origin's smoothed response time after the previous actual
//     start, capped like the floor: a server that slows down is asked less often;
//   - the pause. The first start after a pause restarts the schedule from itself, so the next
//     one comes a whole interval later even when the first was granted late.
//
// About 800 bytes of state are kept per origin in use. An origin unused for Config.ForgetAfter
// (a minute by default) is forgotten once nothing about it can hold back a start any more: no
// request waiting or in flight, no pause, Crawl-delay, 429 penalty, run of errors or slowdown in
// force, and its last starts older than every spacing (see forgettable). Used again, it starts
// afresh and gets no start the remembered one would not have allowed. A given-up origin is never
// forgotten. Stats reports the origins the clock remembers; the counters of a forgotten one were
// reported as they happened, in the logs and the door's events.
type Local struct {
	cfg Config // defaults filled in

	mu      sync.Mutex
	origins map[string]*state
	lru     idle.List[state] // the origins by last use, for forgetting (see forget.go)

	// testHookEnqueue, set only by this package's tests before first use, is called with mu held
	// whenever a request joins an origin's line, so a test knows its requests are in line
	// without sleeping.
	testHookEnqueue func()
}

// NewLocal validates cfg and returns a clock. It refuses a rate above DefaultRate for any origin
// not listed in cfg.Authorized, because the RRZE crawler rules require the operator's
// authorisation for it.
func NewLocal(cfg Config) (*Local, error) {
	if err := validate(&cfg); err != nil {
		return nil, err
	}
	return newLocal(defaults(cfg)), nil
}

func newLocal(cfg Config) *Local {
	return &Local{cfg: cfg, origins: make(map[string]*state), lru: idle.New(func(s *state) *idle.Links[state] { return &s.idle })}
}

func (l *Local) logger() *slog.Logger { return quietlog.Or(l.cfg.Logger) }

// state is one origin's schedule. Every field is guarded by Local.mu. A state is removed from
// Local.origins only when forgettable, which no waiting request or held lease allows; a lease
// that expired may outlive its state, and reaches the origin's current one (see current).
type state struct {
	key        string
	rate       float64                  // the configured rate for this origin
	factor     float64                  // 1, or lower after 429s
	floor      time.Duration            // the Crawl-delay floor in force: the largest of floors, capped
	floors     map[string]time.Duration // Crawl-delay by source (robots.txt and token); nil when none
	last       time.Time                // when the latest start was granted (or sent, if later); zero before the first
	tat        time.Time                // GCRA: the theoretical time of the next start
	recent     []time.Time              // ring of the latest actual starts (sent, else granted), by sequence
	count      int64                    // starts granted so far: the sequence number of the next one
	response   time.Duration            // smoothed response time (see observe); 0 before the first response
	latency    time.Duration            // the spacing the response time asks for; 0 when none or off
	slowed     bool                     // the latency interval is the strictest one (a Pace was reported)
	pauseUntil time.Time
	pauseWhy   string
	leases     map[*lease]struct{}
	queue      []*waiter
	headWhy    string    // what the head of the queue waits for
	headSince  time.Time // since when the head of the queue has been first in line with a place free
	fails      int       // consecutive failures
	okRun      int       // consecutive successes since the rate last changed
	gaveUp     *GiveUpError
	st         OriginStats

	idle      idle.Links[state] // its place in Local.lru
	forgotten bool              // removed from Local.origins
}

// origin returns key's state, creating it, marks it used at now, and forgets a few idle
// origins. It requires l.mu held.
func (l *Local) origin(key string, now time.Time) *state {
	s, ok := l.origins[key]
	if !ok {
		s = &state{key: key, rate: l.cfg.RateFor(key), factor: 1, leases: make(map[*lease]struct{})}
		s.st.Origin = key
		l.origins[key] = s
	}
	l.lru.Touch(s, now)
	l.sweep(now)
	return s
}

// current returns the state a lease's outcome applies to: its own, or, when that was forgotten
// after the lease expired, the origin's current one. It requires l.mu held.
func (l *Local) current(s *state, now time.Time) *state {
	if s.forgotten {
		return l.origin(s.key, now)
	}
	l.lru.Touch(s, now)
	return s
}

// Authorize records that key's operator allowed rate starts per second (the RRZE crawler rules
// require that authorisation for more than DefaultRate), for every user of this clock: the
// authorisation belongs to the origin, not to one caller. When callers disagree the lowest
// authorised rate holds, so the order in which doors start does not decide the load on the
// site; a lower rate from Config.Rates still wins. Use it to let a door with authorised rates
// share the process-wide clock instead of keeping a budget of its own.
func (l *Local) Authorize(key string, rate float64) error {
	m, err := normalizeRates("Authorized", map[string]float64{key: rate})
	if err != nil {
		return err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	auth := maps.Clone(l.cfg.Authorized)
	if auth == nil {
		auth = map[string]float64{}
	}
	for k, r := range m {
		if prev, ok := auth[k]; ok && prev < r {
			r = prev
		}
		auth[k] = r
		if s, ok := l.origins[k]; ok {
			if lower, ok := l.cfg.Rates[k]; ok {
				r = min(r, lower)
			}
			if s.rate != r {
				s.rate = r
				s.retime(&l.cfg)
				notifyHead(s)
			}
		}
	}
	l.cfg.Authorized = auth
	return nil
}

// SetFloor records source's Crawl-delay for key; see [Clock]. The floor in force is the largest
// delay any source asks for, capped at Config.MaxFloor; a source asking for more than the cap is
// logged once, when its delay changes. Repeating a source's current delay changes nothing, so the
// robots gate may call it for every request.
func (l *Local) SetFloor(key, source string, interval time.Duration) {
	now := l.cfg.Time.Now()
	l.mu.Lock()
	s := l.origin(key, now)
	prev, had := s.floors[source]
	switch {
	case interval <= 0 && !had, interval > 0 && had && prev == interval:
		l.mu.Unlock()
		return
	case interval <= 0:
		delete(s.floors, source)
	default:
		if s.floors == nil {
			s.floors = make(map[string]time.Duration, 1)
		}
		s.floors[source] = interval
	}
	var floor time.Duration
	for _, d := range s.floors {
		floor = max(floor, d)
	}
	floor = min(floor, l.cfg.MaxFloor)
	if s.floor != floor {
		s.floor = floor
		notifyHead(s)
	}
	l.mu.Unlock()
	if interval > l.cfg.MaxFloor {
		l.logger().Warn("hostclock: Crawl-delay capped", "origin", key, "source", source, "crawl-delay", interval, "cap", l.cfg.MaxFloor)
	}
}

// Pause keeps key from starting requests before until; see [Clock].
func (l *Local) Pause(key string, until time.Time, reason string) {
	now := l.cfg.Time.Now()
	l.mu.Lock()
	p := l.pause(l.origin(key, now), until, cmp.Or(reason, ReasonBackoff))
	l.mu.Unlock()
	if p != nil {
		l.logger().Info("hostclock: origin paused", "origin", key, "reason", p.Reason, "until", until,
			"duration", until.Sub(now))
	}
}

// Earliest returns when a request to key could be granted if it asked now; see [Clock]. An
// origin the clock has not seen yet may start now. It allocates nothing.
func (l *Local) Earliest(key string) (time.Time, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	s, ok := l.origins[key]
	if !ok {
		return time.Time{}, nil
	}
	if s.gaveUp != nil {
		return time.Time{}, s.gaveUp
	}
	at, _ := s.earliest(&l.cfg)
	return at, nil
}

// PausedUntil reports key's pause; see [Clock].
func (l *Local) PausedUntil(key string) (time.Time, string, error) {
	now := l.cfg.Time.Now()
	l.mu.Lock()
	defer l.mu.Unlock()
	s, ok := l.origins[key]
	if !ok {
		return time.Time{}, "", nil
	}
	if s.gaveUp != nil {
		return time.Time{}, ReasonGiveUp, s.gaveUp
	}
	if s.pauseUntil.After(now) {
		return s.pauseUntil, s.pauseWhy, nil
	}
	return time.Time{}, "", nil
}
