package hostclock

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"math"
	"math/rand/v2"
	"net/url"
	"slices"
	"sync"
	"time"

	"github.com/politecrawl/etiquette/politeness/backoff"
	"github.com/politecrawl/etiquette/politeness/kind"
	"github.com/politecrawl/etiquette/politeness/origin"
)

// Defaults and limits of [Config].
const (
	// DefaultRate is the start rate per origin when Config.Rate is 0, and the highest rate any
	// origin gets without being listed in Config.Authorized (RRZE crawler rules).
	DefaultRate = 3.0
	// DefaultConcurrency is the in-flight cap per origin when Config.Concurrency is 0.
	DefaultConcurrency = 2
	// DefaultMargin lengthens every interval by 4 %: at 3 starts per second the spacing is
	// 347 ms instead of 333 ms, so three consecutive starts span 1.04 s and any one second window
	// still holds at most three of them when an arrival is delayed by up to 40 ms on the way.
	DefaultMargin = 0.04
	// DefaultMaxFloor caps the Crawl-delay floor (peers cap between 30 s and 300 s): a robots.txt
	// asking for an hour between requests gets one a minute, and the cap is logged.
	DefaultMaxFloor = time.Minute
	// DefaultErrorBudget is the number of consecutive failures (429, 5xx, timeouts, connection
	// errors) after which an origin is given up for the crawl.
	DefaultErrorBudget = 8
	// DefaultRecoverAfter is the run of consecutive successes after which a rate lowered by a 429
	// steps back up by RecoverStep (never above the configured rate).
	DefaultRecoverAfter = 10
	// DefaultLeaseTTL is how long a lease holds its place when Done is never called.
	DefaultLeaseTTL = 10 * time.Minute
)

const (
	// PenaltyFactor multiplies an origin's rate after each 429.
	PenaltyFactor = 0.5
	// MinRateFactor bounds the penalty: repeated 429s lower the rate to no less than 1/8 of the
	// configured one (the pauses keep growing instead).
	MinRateFactor = 1.0 / 8
	// RecoverStep multiplies a lowered rate after each run of RecoverAfter successes: from half
	// the rate it takes four runs to recover fully.
	RecoverStep = 1.25
)

// Config configures a [Local] clock. The zero value is the default: 3 starts per second per
// origin, 2 in flight, default backoff, real time.
type Config struct {
	// Rate is the start rate per origin, per second. 0 means DefaultRate; a value above it is
	// refused: list the origin in Authorized instead.
	Rate float64
	// Authorized maps budget keys ("host" or "host:port") to a rate the origin's operator has
	// authorised, which may exceed DefaultRate. The RRZE crawler rules require that authorisation
	// for anything faster than 3 requests per second.
	Authorized map[string]float64
	// Rates maps budget keys to a rate lower than the one they would otherwise get.
	Rates map[string]float64
	// Concurrency is the in-flight cap per origin; 0 means DefaultConcurrency.
	Concurrency int
	// Margin lengthens every interval by this fraction; 0 means DefaultMargin. Must be below 1.
	Margin float64
	// MaxFloor caps the Crawl-delay floor; 0 means DefaultMaxFloor.
	MaxFloor time.Duration
	// MaxRetryAfter is the longest Retry-After honoured by waiting; a longer one gives the origin
	// up for the crawl. 0 means backoff.MaxRetryAfter (24 h).
	MaxRetryAfter time.Duration
	// ErrorBudget is the number of consecutive failures after which an origin is given up;
	// 0 means DefaultErrorBudget.
	ErrorBudget int
	// RecoverAfter is the run of successes after which a lowered rate steps up; 0 means
	// DefaultRecoverAfter.
	RecoverAfter int
	// Backoff decides the pause after a failure without a usable Retry-After; nil means
	// backoff.DefaultPolicy.
	Backoff backoff.Policy
	// LeaseTTL is how long a lease holds its place without Done; 0 means DefaultLeaseTTL. It should
	// exceed the longest request (the door's Timeout covers reading the body).
	LeaseTTL time.Duration
	// Time is the clock read and waited on; nil means System.
	Time Time
	// Rand returns uniform values in [0, 1) for the backoff jitter; nil means math/rand/v2.
	Rand func() float64
	// Logger receives every wait (Debug), pause (Info) and give-up (Warn); nil means slog.Default().
	Logger *slog.Logger
}

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
//   - the window: the K-th previous start (K = the rate rounded up, at most 64) plus K
//     intervals with half the margin, counted from when those requests reached the server (Lease.Sent,
//     else the grant), so that however late some starts were granted or sent, and however the
//     schedule catches up, no window of one second holds more than the rate, with 20 ms to spare
//     (by default) for the way from the connection to the server's log. Only a start late by more
//     than that pushes a later one back;
//   - half an interval after the previous actual start, so a late start is not followed by one
//     right behind it;
//   - the Crawl-delay floor after the previous actual start (it is a minimum gap by definition);
//   - the pause.
//
// A few hundred bytes of state are kept per origin seen, for the life of the clock, so that its
// pauses, give-up and counters last the whole crawl.
type Local struct {
	cfg Config // defaults filled in

	mu      sync.Mutex
	origins map[string]*state
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

func validate(cfg *Config) error {
	if cfg.Rate < 0 || cfg.Rate > DefaultRate {
		return fmt.Errorf("hostclock: Config.Rate %g is outside (0, %g] starts per second; the RRZE crawler rules "+
			"require an operator's authorisation for more: list the origin with its rate in Config.Authorized", cfg.Rate, DefaultRate)
	}
	if cfg.Concurrency < 0 {
		return fmt.Errorf("hostclock: Config.Concurrency %d is negative; use 0 for the default of %d", cfg.Concurrency, DefaultConcurrency)
	}
	if cfg.Margin < 0 || cfg.Margin >= 1 {
		return fmt.Errorf("hostclock: Config.Margin %g is outside [0, 1); use 0 for the default of %g", cfg.Margin, DefaultMargin)
	}
	auth, err := normalizeRates("Authorized", cfg.Authorized)
	if err != nil {
		return err
	}
	rates, err := normalizeRates("Rates", cfg.Rates)
	if err != nil {
		return err
	}
	limit := cmp.Or(cfg.Rate, DefaultRate)
	for k, r := range rates {
		allowed := limit
		if a, ok := auth[k]; ok {
			allowed = max(a, limit)
		}
		if r > allowed {
			return fmt.Errorf("hostclock: Config.Rates[%q] = %g exceeds the %g starts per second this origin may get; "+
				"the RRZE crawler rules require an operator's authorisation for more: list it in Config.Authorized", k, r, allowed)
		}
	}
	cfg.Authorized, cfg.Rates = auth, rates
	return nil
}

// normalizeRates turns user-written keys ("Example.org:443") into budget keys ("example.org").
func normalizeRates(field string, m map[string]float64) (map[string]float64, error) {
	out := make(map[string]float64, len(m))
	for k, r := range m {
		u, err := url.Parse("http://" + k)
		var key string
		if err == nil && u.Path == "" && u.User == nil {
			key, err = origin.BudgetKey(u)
		} else if err == nil {
			err = errors.New("not a host or host:port")
		}
		if err != nil {
			return nil, fmt.Errorf("hostclock: Config.%s key %q is not a budget key (\"host\" or \"host:port\"): %v", field, k, err)
		}
		if !(r > 0) {
			return nil, fmt.Errorf("hostclock: Config.%s[%q] = %g; a rate must be positive", field, k, r)
		}
		out[key] = r
	}
	return out, nil
}

func defaults(cfg Config) Config {
	cfg.Rate = cmp.Or(cfg.Rate, DefaultRate)
	cfg.Concurrency = cmp.Or(cfg.Concurrency, DefaultConcurrency)
	cfg.Margin = cmp.Or(cfg.Margin, DefaultMargin)
	cfg.MaxFloor = cmp.Or(cfg.MaxFloor, DefaultMaxFloor)
	cfg.MaxRetryAfter = cmp.Or(cfg.MaxRetryAfter, backoff.MaxRetryAfter)
	cfg.ErrorBudget = cmp.Or(cfg.ErrorBudget, DefaultErrorBudget)
	cfg.RecoverAfter = cmp.Or(cfg.RecoverAfter, DefaultRecoverAfter)
	cfg.LeaseTTL = cmp.Or(cfg.LeaseTTL, DefaultLeaseTTL)
	if cfg.Backoff == nil {
		cfg.Backoff = backoff.DefaultPolicy
	}
	if cfg.Time == nil {
		cfg.Time = System
	}
	if cfg.Rand == nil {
		cfg.Rand = rand.Float64
	}
	return cfg
}

func newLocal(cfg Config) *Local {
	return &Local{cfg: cfg, origins: make(map[string]*state)}
}

func (l *Local) logger() *slog.Logger {
	if l.cfg.Logger != nil {
		return l.cfg.Logger
	}
	return slog.Default()
}

// state is one origin's schedule. Every field is guarded by Local.mu; states are never removed,
// so a pointer to one stays valid.
type state struct {
	key        string
	rate       float64       // the configured rate for this origin
	factor     float64       // 1, or lower after 429s
	floor      time.Duration // Crawl-delay
	last       time.Time     // when the latest start was granted (or sent, if later); zero before the first
	tat        time.Time     // GCRA: the theoretical time of the next start
	recent     []time.Time   // ring of the latest actual starts (sent, else granted), by sequence
	count      int64         // starts granted so far: the sequence number of the next one
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
}

type waiter struct {
	wake   chan struct{} // buffered: a notification is never lost and never blocks
	robots bool
}

// origin returns key's state, creating it. It requires l.mu held.
func (l *Local) origin(key string) *state {
	s, ok := l.origins[key]
	if !ok {
		rate := l.cfg.Rate
		if a, ok := l.cfg.Authorized[key]; ok {
			rate = a
		}
		if r, ok := l.cfg.Rates[key]; ok {
			rate = min(rate, r)
		}
		s = &state{key: key, rate: rate, factor: 1, leases: make(map[*lease]struct{})}
		s.st.Origin = key
		l.origins[key] = s
	}
	return s
}

// maxWindow bounds the log of recent starts kept per origin (see earliest).
const maxWindow = 64

// rateInterval returns the spacing between starts the origin's current rate asks for, with the
// margin.
func (s *state) rateInterval(margin float64) time.Duration {
	return time.Duration(float64(time.Duration(float64(time.Second)/(s.rate*s.factor))) * (1 + margin))
}

// earliest returns the first instant the next start may happen, ignoring concurrency, and the
// rule that sets it: the stricter of the rules listed on [Local].
func (s *state) earliest(margin float64) (time.Time, string) {
	var t time.Time
	why := ""
	later := func(c time.Time, w string) {
		if c.After(t) {
			t, why = c, w
		}
	}
	if !s.last.IsZero() {
		iv := s.rateInterval(margin)
		later(s.tat, ReasonRate)
		later(s.last.Add(iv/2), ReasonRate)
		if k := len(s.recent); s.count >= int64(k) {
			w := float64(k) * float64(time.Second) / (s.rate * s.factor) * (1 + margin/2)
			later(s.recent[s.count%int64(k)].Add(time.Duration(w)), ReasonRate)
		}
		if s.floor > 0 {
			later(s.last.Add(time.Duration(float64(s.floor)*(1+margin))), ReasonCrawlDelay)
		}
	}
	later(s.pauseUntil, s.pauseWhy)
	return t, why
}

// retime puts the next theoretical start one interval of the current rate after the previous
// start, when the rate changed. It requires l.mu held.
func (s *state) retime(margin float64) {
	if !s.last.IsZero() {
		s.tat = s.last.Add(s.rateInterval(margin))
	}
}

// started records a start granted at now that was due at sched (see grant) and returns its
// sequence number. It requires l.mu held.
func (s *state) started(now, sched time.Time, margin float64) int64 {
	s.tat = sched.Add(s.rateInterval(margin))
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

// check returns 0 when the head of s's queue may start at now; otherwise how long to wait (a timer
// is set for it) and why. It requires l.mu held.
func (l *Local) check(s *state, now time.Time) (time.Duration, string) {
	l.expire(s, now)
	if len(s.leases) >= l.cfg.Concurrency {
		var first time.Time
		for le := range s.leases {
			if first.IsZero() || le.expires.Before(first) {
				first = le.expires
			}
		}
		return first.Sub(now), ReasonConcurrency
	}
	t, why := s.earliest(l.cfg.Margin)
	if !now.Before(t) {
		return 0, ""
	}
	return t.Sub(now), why
}

// expire reclaims the places of leases whose Done never came. It requires l.mu held.
func (l *Local) expire(s *state, now time.Time) {
	for le := range s.leases {
		if !now.Before(le.expires) {
			s.freed(le.expires, l.cfg.Concurrency)
			delete(s.leases, le)
			s.st.Expired++
			l.logger().Warn("hostclock: lease expired without Done; a response body was probably never closed",
				"origin", s.key, "granted", le.grant.At, "ttl", l.cfg.LeaseTTL)
		}
	}
}

// freed notes that a place is freed at t: when every place was taken, the head of the queue has
// been able to go only since t. It requires l.mu held and is called before the lease is removed.
func (s *state) freed(t time.Time, concurrency int) {
	if len(s.leases) >= concurrency {
		s.headSince = later(s.headSince, t)
	}
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// notifyHead wakes the head of s's queue to re-check; it requires l.mu held.
func notifyHead(s *state) {
	if len(s.queue) > 0 {
		select {
		case s.queue[0].wake <- struct{}{}:
		default:
		}
	}
}

func notifyAll(s *state) {
	for _, w := range s.queue {
		select {
		case w.wake <- struct{}{}:
		default:
		}
	}
}

func (s *state) enqueue(w *waiter, now time.Time) {
	if len(s.queue) == 0 {
		s.headSince = now
	}
	if !w.robots {
		s.queue = append(s.queue, w)
		return
	}
	// robots.txt goes ahead of every page: pages are waiting for it at the robots gate anyway.
	i := 0
	for i < len(s.queue) && s.queue[i].robots {
		i++
	}
	s.queue = slices.Insert(s.queue, i, w)
}

func (s *state) remove(w *waiter) {
	if i := slices.Index(s.queue, w); i >= 0 {
		s.queue = slices.Delete(s.queue, i, i+1)
		if i == 0 {
			notifyHead(s)
		}
	}
}

// Acquire waits for a start slot to key; see [Clock]. Requests wait in line per origin, first come
// first served, except that robots.txt requests go ahead of pages.
func (l *Local) Acquire(ctx context.Context, key string, k kind.Kind) (Lease, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	tm := l.cfg.Time
	l.mu.Lock()
	s := l.origin(key)
	if s.gaveUp != nil {
		s.st.Refused++
		err := s.gaveUp
		l.mu.Unlock()
		return nil, err
	}
	w := &waiter{wake: make(chan struct{}, 1), robots: k == kind.Robots}
	start := tm.Now()
	s.enqueue(w, start)
	var spent map[string]time.Duration // per reason, allocated only when waiting
	phaseAt, phaseWhy := start, ""
	for {
		now := tm.Now()
		if phaseWhy != "" {
			spent[phaseWhy] += now.Sub(phaseAt)
		}
		if s.gaveUp != nil {
			s.remove(w)
			s.st.Refused++
			err := s.gaveUp
			l.mu.Unlock()
			return nil, err
		}
		var wait time.Duration
		if s.queue[0] == w {
			wait, phaseWhy = l.check(s, now)
			if wait == 0 {
				return l.grant(s, w, k, start, now, spent), nil
			}
			s.headWhy = phaseWhy
		} else {
			// Behind others: this request waits for whatever the head waits for.
			wait, phaseWhy = -1, cmp.Or(s.headWhy, ReasonRate)
		}
		if spent == nil {
			spent = make(map[string]time.Duration, 2)
		}
		phaseAt = now
		l.mu.Unlock()

		var timer Timer
		var fire <-chan time.Time
		if wait > 0 {
			timer = tm.NewTimer(wait)
			fire = timer.C()
		}
		var cause error
		select {
		case <-ctx.Done():
			cause = ctx.Err()
		case <-fire:
		case <-w.wake:
		}
		if timer != nil {
			timer.Stop()
		}
		l.mu.Lock()
		if cause != nil {
			s.remove(w)
			l.mu.Unlock()
			return nil, fmt.Errorf("hostclock: gave up waiting for a start slot to %s (%s): %w", key, phaseWhy, cause)
		}
	}
}

// grant hands the slot to w, the head of s's queue. It requires l.mu held and releases it.
func (l *Local) grant(s *state, w *waiter, k kind.Kind, start, now time.Time, spent map[string]time.Duration) *lease {
	// The start was due when the rules first allowed it and the request was first in line with a
	// place free. The next theoretical start counts from there, not from now: a start that a busy
	// machine granted late does not push back every later one (the window rule in earliest still
	// keeps the catching-up within the rate), and an idle origin does not bank the time it was
	// idle as a burst.
	due, _ := s.earliest(l.cfg.Margin)
	due = later(due, s.headSince)
	if due.IsZero() || due.After(now) {
		due = now
	}
	s.queue = s.queue[1:]
	s.headSince = now
	seq := s.started(now, due, l.cfg.Margin)
	le := &lease{l: l, s: s, seq: seq, kind: k, expires: now.Add(l.cfg.LeaseTTL)}
	le.grant = Grant{At: now}
	if spent != nil { // it blocked at least once; otherwise the nanoseconds spent here are no wait
		le.grant.Wait = now.Sub(start)
	}
	s.leases[le] = struct{}{}
	s.st.Requests++
	if le.grant.Wait > 0 {
		s.st.Waits++
		s.st.Waited += le.grant.Wait
		var most time.Duration
		for why, d := range spent {
			if d > most {
				most, le.grant.Reason = d, why
			}
		}
		le.grant.Reason = cmp.Or(le.grant.Reason, ReasonRate)
	}
	notifyHead(s)
	l.mu.Unlock()
	if log := l.logger(); le.grant.Wait > 0 && log.Enabled(context.Background(), slog.LevelDebug) {
		log.Debug("hostclock: waited", "origin", s.key, "kind", string(k), "reason", le.grant.Reason, "wait", le.grant.Wait)
	}
	return le
}

type lease struct {
	l       *Local
	s       *state
	seq     int64
	kind    kind.Kind
	grant   Grant
	expires time.Time
	once    sync.Once
	caused  *Pause // guarded by l.mu
}

func (le *lease) Grant() Grant { return le.grant }

func (le *lease) Sent() {
	now := le.l.cfg.Time.Now()
	le.l.mu.Lock()
	le.s.sent(le.seq, now)
	le.l.mu.Unlock()
}

func (le *lease) Done(o Outcome) { le.once.Do(func() { le.l.done(le, o) }) }

func (le *lease) Caused() (Pause, bool) {
	le.l.mu.Lock()
	defer le.l.mu.Unlock()
	if le.caused == nil {
		return Pause{}, false
	}
	return *le.caused, true
}

func (l *Local) done(le *lease, o Outcome) {
	now := l.cfg.Time.Now()
	l.mu.Lock()
	s := le.s
	if _, held := s.leases[le]; held { // not held when it expired; its outcome still counts
		s.freed(now, l.cfg.Concurrency)
		delete(s.leases, le)
	}
	v := l.learn(s, o, now)
	if v.pause != nil {
		le.caused = v.pause
	}
	if s.gaveUp != nil {
		notifyAll(s)
	} else {
		notifyHead(s)
	}
	rate := s.rate * s.factor
	l.mu.Unlock()
	log := l.logger()
	switch {
	case v.gaveUp:
		log.Warn("hostclock: origin given up for this crawl", "origin", s.key, "reason", v.pause.Reason, "status", o.Status, "err", o.Err, "detail", s.gaveUp.Reason)
	case v.pause != nil:
		log.Info("hostclock: origin paused", "origin", s.key, "reason", v.pause.Reason, "duration", v.pause.Until.Sub(now),
			"until", v.pause.Until, "status", o.Status, "err", o.Err, "rate", rate)
	case v.recovered:
		log.Info("hostclock: origin rate recovering", "origin", s.key, "rate", rate)
	}
}

// verdict is what one outcome changed.
type verdict struct {
	pause     *Pause
	gaveUp    bool
	recovered bool
}

// classify maps an outcome to a failure class, or 0 for a success; neutral reports an outcome that
// says nothing about the origin (the caller cancelled the request).
func classify(o Outcome) (c backoff.Class, neutral bool) {
	switch {
	case o.Err != nil && errors.Is(o.Err, context.Canceled):
		return 0, true
	case o.Err != nil:
		return backoff.Transient, false
	case o.Status == 429 || o.Status == 503:
		return backoff.Throttled, false
	case o.Status >= 500:
		return backoff.Transient, false
	}
	return 0, false
}

// learn applies the policy to one outcome at now. It requires l.mu held.
func (l *Local) learn(s *state, o Outcome, now time.Time) (v verdict) {
	switch {
	case o.Status == 429:
		s.st.TooManyRequests++
	case o.Status == 503:
		s.st.Unavailable++
	case o.Status >= 500:
		s.st.ServerErrors++
	}
	class, neutral := classify(o)
	if o.Err != nil && !neutral {
		s.st.TransportErrors++
	}
	if s.gaveUp != nil || neutral {
		return v
	}
	// Retry-After counts on 429 (RFC 6585 §4), on 503 and every other 5xx, and on 3xx
	// (RFC 9110 §10.2.3).
	ra := o.RetryAfter > 0 && (o.Status == 429 || o.Status >= 500 || (o.Status >= 300 && o.Status < 400))
	if ra && o.RetryAfter > l.cfg.MaxRetryAfter {
		return l.giveUp(s, now, fmt.Sprintf("status %d asked for a Retry-After of %s, beyond the ceiling of %s",
			o.Status, o.RetryAfter, l.cfg.MaxRetryAfter))
	}
	if class == 0 {
		s.fails = 0
		if s.factor < 1 {
			s.okRun++
			if s.okRun >= l.cfg.RecoverAfter {
				s.factor, s.okRun, v.recovered = min(1, s.factor*RecoverStep), 0, true
				s.retime(l.cfg.Margin)
				notifyHead(s)
			}
		}
		if ra {
			v.pause = l.pause(s, now.Add(o.RetryAfter), ReasonRetryAfter)
		}
		return v
	}
	s.fails++
	s.okRun = 0
	if o.Status == 429 {
		s.factor = max(MinRateFactor, s.factor*PenaltyFactor)
		s.retime(l.cfg.Margin)
	}
	if s.fails >= l.cfg.ErrorBudget {
		last := fmt.Sprintf("status %d", o.Status)
		if o.Err != nil {
			last = o.Err.Error()
		}
		return l.giveUp(s, now, fmt.Sprintf("the error budget of %d consecutive failures is spent (the last: %s)", l.cfg.ErrorBudget, last))
	}
	if ra {
		v.pause = l.pause(s, now.Add(o.RetryAfter), ReasonRetryAfter)
	} else {
		v.pause = l.pause(s, now.Add(l.cfg.Backoff(class, s.fails, l.cfg.Rand)), ReasonBackoff)
	}
	return v
}

// pause lengthens s's pause to until; it returns the pause when it changed anything.
// It requires l.mu held.
func (l *Local) pause(s *state, until time.Time, why string) *Pause {
	if !until.After(s.pauseUntil) {
		return nil
	}
	s.pauseUntil, s.pauseWhy = until, why
	s.st.Pauses++
	notifyHead(s)
	return &Pause{Until: until, Reason: why}
}

func (l *Local) giveUp(s *state, now time.Time, reason string) verdict {
	s.gaveUp = &GiveUpError{Origin: s.key, Reason: reason, At: now}
	s.st.GiveUps++
	s.st.GiveUpReason = reason
	return verdict{pause: &Pause{Reason: ReasonGiveUp}, gaveUp: true}
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
				s.retime(l.cfg.Margin)
				notifyHead(s)
			}
		}
	}
	l.cfg.Authorized = auth
	return nil
}

// SetFloor sets key's Crawl-delay floor; see [Clock]. A floor above Config.MaxFloor is capped and
// the cap logged.
func (l *Local) SetFloor(key string, interval time.Duration) {
	interval = max(interval, 0)
	capped := interval > l.cfg.MaxFloor
	if capped {
		l.logger().Warn("hostclock: Crawl-delay capped", "origin", key, "crawl-delay", interval, "cap", l.cfg.MaxFloor)
		interval = l.cfg.MaxFloor
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	s := l.origin(key)
	if s.floor != interval {
		s.floor = interval
		notifyHead(s)
	}
}

// Pause keeps key from starting requests before until; see [Clock].
func (l *Local) Pause(key string, until time.Time, reason string) {
	l.mu.Lock()
	p := l.pause(l.origin(key), until, cmp.Or(reason, ReasonBackoff))
	l.mu.Unlock()
	if p != nil {
		l.logger().Info("hostclock: origin paused", "origin", key, "reason", p.Reason, "until", until,
			"duration", until.Sub(l.cfg.Time.Now()))
	}
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

// Stats returns every origin's counters, sorted by key.
func (l *Local) Stats() []OriginStats {
	now := l.cfg.Time.Now()
	l.mu.Lock()
	out := make([]OriginStats, 0, len(l.origins))
	for _, s := range l.origins {
		st := s.st
		st.Rate = s.rate * s.factor
		st.Floor = s.floor
		if s.pauseUntil.After(now) {
			st.PausedUntil = s.pauseUntil
		}
		out = append(out, st)
	}
	l.mu.Unlock()
	slices.SortFunc(out, func(a, b OriginStats) int { return cmp.Compare(a.Origin, b.Origin) })
	return out
}
