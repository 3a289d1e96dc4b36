// A start slot of the shared clock, and what its outcome teaches every process.

package redisstore

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/politecrawl/etiquette/politeness/backoff"
	"github.com/politecrawl/etiquette/politeness/hostclock"
	"github.com/politecrawl/etiquette/politeness/kind"
)

// minRateFactor is the floor of the 429 penalty, as hostclock.Local keeps it: repeated 429s
// lower the rate to no less than 1/8 of the configured one.
const minRateFactor = 1.0 / 8

// sentTimeout bounds the report that a request reached the server. It is made from the
// transport's write path, so it is not retried through an outage: a lost report only leaves the
// window counted from the grant, a few milliseconds earlier.
const sentTimeout = time.Second

// lease is a granted start slot; see [hostclock.Lease].
type lease struct {
	c          *Clock
	ln         *line
	id         string
	gen        string // the origin's generation it was granted under
	seq        int64
	kind       kind.Kind
	grant      hostclock.Grant
	renewUntil time.Time // the heartbeat stops renewing it then (Clock.LeaseTTL after the grant)
	once       sync.Once

	mu     sync.Mutex
	sentAt time.Time
	caused *hostclock.Pause
	paced  *hostclock.Pace
}

func (le *lease) Grant() hostclock.Grant { return le.grant }

// Sent moves the start's entry in the shared window to now, as the server's clock reads it.
func (le *lease) Sent() {
	le.mu.Lock()
	if le.sentAt.IsZero() {
		le.sentAt = time.Now()
	}
	le.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), sentTimeout)
	defer cancel()
	if err := sentScript.Run(ctx, le.c.s.client, []string{le.ln.keys.clock}, le.seq).Err(); err != nil {
		le.c.log.Debug("redisstore: could not record when a request reached the server", "origin", le.ln.keys.budget, "err", err)
	}
}

func (le *lease) Done(o hostclock.Outcome) { le.once.Do(func() { le.c.done(le, o) }) }

func (le *lease) Caused() (hostclock.Pause, bool) {
	le.mu.Lock()
	defer le.mu.Unlock()
	if le.caused == nil {
		return hostclock.Pause{}, false
	}
	return *le.caused, true
}

func (le *lease) Paced() (hostclock.Pace, bool) {
	le.mu.Lock()
	defer le.mu.Unlock()
	if le.paced == nil {
		return hostclock.Pace{}, false
	}
	return *le.paced, true
}

// done frees le's place and applies o in Redis (doneScript), then in this process's line and
// counters.
func (c *Clock) done(le *lease, o hostclock.Outcome) {
	now := time.Now()
	ln := le.ln
	class, neutral := o.Class()
	label := "ok"
	switch {
	case neutral:
		label = "neutral"
	case class == backoff.Throttled:
		label = "throttled"
	case class == backoff.Transient:
		label = "transient"
	}
	le.mu.Lock()
	took := time.Duration(-1)
	if o.Status > 0 && o.Err == nil {
		took = now.Sub(cmp.Or(le.sentAt, le.grant.At))
	}
	le.mu.Unlock()
	last := fmt.Sprintf("status %d", o.Status)
	if o.Err != nil {
		last = o.Err.Error()
	}
	args := doneArgs{Lease: le.id, Generation: le.gen, Status: o.Status, RetryAfter: o.RetryAfter.Microseconds(), Class: label,
		MaxRetryAfter: c.cfg.MaxRetryAfter.Microseconds(), ErrorBudget: c.cfg.ErrorBudget, RecoverAfter: c.cfg.RecoverAfter,
		Took: took.Microseconds(), LatencyFactor: c.cfg.LatencyFactor, FloorCap: c.cfg.MaxFloor.Microseconds(),
		Margin: c.cfg.Margin, JitterMargin: c.cfg.JitterMargin.Microseconds(), Rate: ln.rate, StateTTL: stateTTL.Milliseconds(), StatsTTL: c.s.opts.CrawlIdle.Milliseconds(),
		Freed: ln.keys.freed,
		// The give-up reasons as hostclock.Local words them.
		GiveUpRetryAfter: fmt.Sprintf("status %d asked for a Retry-After of %s, beyond the ceiling of %s", o.Status, o.RetryAfter, c.cfg.MaxRetryAfter),
		GiveUpBudget:     fmt.Sprintf("the error budget of %d consecutive failures is spent (the last: %s)", c.cfg.ErrorBudget, last),
		Penalty:          hostclock.PenaltyFactor, MinFactor: minRateFactor, RecoverStep: hostclock.RecoverStep,
		Counts: statsFields(o, neutral), Backoff: []int64{}}
	if class != 0 && !neutral {
		// The pause after the n-th failure in a row, for every n the budget allows: the script
		// knows n, the policy (a Go function with its jitter) is here.
		for n := 1; n < c.cfg.ErrorBudget; n++ {
			args.Backoff = append(args.Backoff, c.cfg.Backoff(class, n, c.cfg.Rand).Microseconds())
		}
	}
	keys := []string{ln.keys.clock, ln.keys.leases, ln.keys.pause, ln.keys.floors, ln.gaveKey, ln.stats, ln.keys.generation}
	var reply []any
	var arrived time.Time
	js, err := json.Marshal(args)
	if err == nil {
		err = c.s.do(context.Background(), "reporting a response of "+ln.keys.budget, func(ctx context.Context) error {
			var err error
			reply, err = doneScript.Run(ctx, c.s.client, keys, js).Slice()
			arrived = time.Now()
			return err
		})
	}
	if err == nil && toInt(reply, 10) == 1 {
		err = c.s.noteLost(&LostError{URL: c.s.url, Origin: ln.keys.budget, What: "the start schedule"})
	}

	c.mu.Lock()
	delete(ln.leases, le)
	c.touch(ln, c.now())
	st := &ln.st
	switch {
	case o.Status == 429:
		st.TooManyRequests++
	case o.Status == 503:
		st.Unavailable++
	case o.Status >= 500:
		st.ServerErrors++
	}
	if o.Err != nil && !neutral {
		st.TransportErrors++
	}
	ln.notifyHead()
	if err != nil {
		c.mu.Unlock()
		c.log.Error("redisstore: a response could not be reported to Redis; its place frees when its lease expires, "+
			"and a pause it asked for is not shared", "origin", ln.keys.budget, "status", o.Status, "err", err)
		return
	}
	var caused *hostclock.Pause
	gaveUp := toInt(reply, 3) == 1
	switch {
	case gaveUp:
		reason := toString(reply, 2)
		ln.gaveUp = &hostclock.GiveUpError{Origin: ln.keys.budget, Reason: reason, At: now}
		st.GiveUps++
		st.GiveUpReason = reason
		for _, w := range ln.waiting {
			notify(w)
		}
		caused = &hostclock.Pause{Reason: hostclock.ReasonGiveUp}
	case toInt(reply, 1) > 0:
		caused = &hostclock.Pause{Until: local(arrived, toInt(reply, 9), toInt(reply, 1)), Reason: toString(reply, 2)}
		st.Pauses++
	}
	var paced *hostclock.Pace
	if p := toInt(reply, 6); p >= 0 {
		paced = &hostclock.Pace{Slowed: p == 1, Interval: time.Duration(toInt(reply, 7)) * time.Microsecond,
			ResponseTime: time.Duration(toInt(reply, 8)) * time.Microsecond}
		if paced.Slowed {
			st.Slowdowns++
		}
	}
	c.mu.Unlock()
	le.mu.Lock()
	le.caused, le.paced = caused, paced
	le.mu.Unlock()
	c.logOutcome(ln.keys.budget, o, caused, paced, toInt(reply, 4) == 1, toString(reply, 5))
}

// doneArgs are doneScript's named arguments; its comment says what each means.
type doneArgs struct {
	Lease            string   `json:"lease"`
	Generation       string   `json:"generation"`
	Status           int      `json:"status"`
	RetryAfter       int64    `json:"retry_after"`
	Class            string   `json:"class"`
	MaxRetryAfter    int64    `json:"max_retry_after"`
	ErrorBudget      int      `json:"error_budget"`
	RecoverAfter     int      `json:"recover_after"`
	Took             int64    `json:"took"`
	LatencyFactor    float64  `json:"latency_factor"`
	FloorCap         int64    `json:"floor_cap"`
	Margin           float64  `json:"margin"`
	JitterMargin     int64    `json:"jitter_margin"`
	Rate             float64  `json:"rate"`
	StateTTL         int64    `json:"state_ttl"`
	StatsTTL         int64    `json:"stats_ttl"`
	Freed            string   `json:"freed"`
	GiveUpRetryAfter string   `json:"giveup_retry_after"`
	GiveUpBudget     string   `json:"giveup_budget"`
	Penalty          float64  `json:"penalty"`
	MinFactor        float64  `json:"min_factor"`
	RecoverStep      float64  `json:"recover_step"`
	Counts           []string `json:"counts"`
	Backoff          []int64  `json:"backoff"`
}

// statsFields names the crawl's counters an outcome counts in (doneScript's stats fields), as
// this process's counters count it.
func statsFields(o hostclock.Outcome, neutral bool) []string {
	f := []string{}
	switch {
	case o.Status == 429:
		f = append(f, "too_many")
	case o.Status == 503:
		f = append(f, "unavailable")
	case o.Status >= 500:
		f = append(f, "server_errors")
	}
	if o.Err != nil && !neutral {
		f = append(f, "transport")
	}
	return f
}

func (c *Clock) logOutcome(key string, o hostclock.Outcome, caused *hostclock.Pause, paced *hostclock.Pace, recovered bool, rate string) {
	switch {
	case caused != nil && caused.Reason == hostclock.ReasonGiveUp:
		c.log.Warn("hostclock: origin given up for this crawl", "origin", key, "status", o.Status, "err", o.Err)
	case caused != nil:
		c.log.Info("hostclock: origin paused", "origin", key, "reason", caused.Reason, "duration", time.Until(caused.Until),
			"until", caused.Until, "status", o.Status, "err", o.Err, "rate", rate)
	case recovered:
		c.log.Info("hostclock: origin rate recovering", "origin", key, "rate", rate)
	}
	switch {
	case paced == nil:
	case paced.Slowed:
		c.log.Info("hostclock: origin slowed down by its response time", "origin", key, "response_time", paced.ResponseTime,
			"interval", paced.Interval, "reason", hostclock.ReasonLatency)
	default:
		c.log.Info("hostclock: origin back to its budget: its responses are fast again", "origin", key,
			"response_time", paced.ResponseTime, "reason", hostclock.ReasonLatency)
	}
}

// renew extends the leases this process holds and has not held for longer than Clock.LeaseTTL
// (a body never closed must not hold a place for ever).
func (c *Clock) renew(ctx context.Context) {
	now := time.Now()
	byOrigin := map[*line][]any{}
	c.mu.Lock()
	for _, ln := range c.lines {
		for le := range ln.leases {
			if now.Before(le.renewUntil) {
				byOrigin[ln] = append(byOrigin[ln], le.id)
			}
		}
	}
	c.mu.Unlock()
	if len(byOrigin) == 0 {
		return
	}
	_, err := c.s.client.Pipelined(ctx, func(p redis.Pipeliner) error {
		for ln, ids := range byOrigin {
			// Eval, not EvalSha: in a pipeline a script the server does not know yet (after a
			// restart) cannot be loaded on the way.
			renewScript.Eval(ctx, p, []string{ln.keys.leases}, append([]any{c.s.opts.LeaseExpiry.Microseconds()}, ids...)...)
		}
		return nil
	})
	if err != nil && !errors.Is(err, redis.Nil) {
		c.log.Warn("redisstore: could not renew this process's start slots; they expire unless renewed in time",
			"redis", c.s.url, "err", err, "expiry", c.s.opts.LeaseExpiry)
	}
}
