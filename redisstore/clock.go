// The shared host clock: hostclock.Clock with its schedule in Redis, so that every process of
// the crawler draws on one budget per origin.

package redisstore

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/politecrawl/etiquette/politeness/hostclock"
	"github.com/politecrawl/etiquette/politeness/kind"
)

// Lifetimes of the clock's keys besides the leases.
const (
	// stateTTL is how long an origin's schedule, 429 penalty and response time outlive its last
	// start: a day without a request to it starts it afresh.
	stateTTL = 24 * time.Hour
	// floorLife is how long a Crawl-delay floor lasts unless its source sets it again: a
	// robots.txt is kept at most 24 h (RFC 9309 §2.4), and the robots gate sets the floor again
	// whenever a request passes it.
	floorLife = 25 * time.Hour
	// floorRewrite is how often a process writes a floor it already wrote, to keep it alive.
	floorRewrite = time.Hour
	// maxConcurrencyWait bounds a wait for a freed place, in case the message that one was freed
	// was lost (pub/sub delivers at most once, and not across a reconnection).
	maxConcurrencyWait = time.Second
)

// Clock is the [hostclock.Clock] of a [Store]: the rules of hostclock.Local — the GCRA schedule
// with its window counted from when requests reached the server, the concurrency cap, robots.txt
// first, Crawl-delay floors, the response-time interval, pauses, the 429 penalty and its
// recovery, the error budget — decided in Redis by one Lua script per step, so that they hold
// for every process together: no one-second window of the server's log holds more than the rate
// however many processes send.
//
// Get it with [Store.Clock] (the zero value is not usable) and pass it as politeness.Policy.Clock
// to every door of the process, and as the frontier's Pacer. Most callers never call its methods.
//
// Waiting: a request waits in this process's line for its origin (robots.txt first, then first
// come first served); only the first in line asks Redis, which answers with the moment to ask
// again — the schedule's next start, a pause's end, a lease's expiry — so nothing polls in a
// loop. While the line flows (the first's latest answer was a grant) the second in line asks
// beside it, once, so that an origin whose rules let requests through as fast as they come is
// not held to one round trip per grant; each ask is one atomic script, so the rules hold, but
// the second may then be granted before the first, which asks again. A wait for a place freed by
// another process ends on a message on the origin's freed channel (pub/sub), or after at most a
// second if the message is lost. A place freed in this process wakes the line directly.
//
// Places are leases that expire Options.LeaseExpiry after this process last renewed them: it
// renews them while the request is in flight, for at most Options.Clock.LeaseTTL (a body never
// closed), so a process that dies frees its places within the expiry. Pauses, give-ups and the
// penalty are in Redis: a 429 seen by one process pauses them all. Stats counts what every
// process of the crawl did (counters in Redis), with the origin's shared rate, floor, response
// time and pause.
//
// Redis unreachable: Acquire grants nothing; it retries for up to Options.Wait and then returns
// an *UnavailableError. Earliest and PausedUntil wait the same way. Done retries too, and when
// it cannot report an outcome the lease expires on its own.
type Clock struct {
	s    *Store
	cfg  hostclock.Config
	log  *slog.Logger
	wake *wakeups

	mu    sync.Mutex
	lines map[string]*line

	nextID atomic.Uint64

	// testHookWait, set only by this package's tests before first use, is called whenever the
	// first request in line was told to wait, before it waits.
	testHookWait func(key string, k kind.Kind, reason string)
}

var _ hostclock.Clock = (*Clock)(nil)

// Clock returns the store's host clock; every call returns the same one.
func (s *Store) Clock() *Clock {
	s.clockOnce.Do(func() {
		s.clock = &Clock{s: s, cfg: s.opts.Clock, log: cmp.Or(s.opts.Clock.Logger, s.log), lines: map[string]*line{}}
		s.clock.wake = newWakeups(s.client, s.clock.freed, s.log)
		s.beat.add(s.clock.renew)
	})
	return s.clock
}

// line is this process's view of one origin. Its fields are guarded by Clock.mu.
type line struct {
	keys    originKeys
	gaveKey string
	stats   string // the crawl's counters of the origin
	rate    float64
	waiting []*waiter // robots.txt first, then in order of arrival
	headWhy string    // what the head of the line waits for
	// flowing is true while the head's latest answer was a grant: the origin's rules let
	// requests through as fast as they ask, so the second in line may ask too (see Acquire).
	flowing bool
	leases  map[*lease]struct{}
	floors  map[string]floorWrite // what this process last wrote, by source
	gaveUp  *hostclock.GiveUpError
	st      hostclock.OriginStats
}

type floorWrite struct {
	interval time.Duration
	at       time.Time
}

type waiter struct {
	wake   chan struct{} // buffered: a notification is never lost and never blocks
	robots bool
}

// line returns key's line, creating it. It requires c.mu held.
func (c *Clock) line(key string) *line {
	ln, ok := c.lines[key]
	if !ok {
		ck := c.s.crawlKeysOf(key)
		ln = &line{keys: keysOf(key), gaveKey: ck.gaveUp, stats: ck.stats, rate: c.cfg.RateFor(key),
			leases: map[*lease]struct{}{}}
		ln.st.Origin = key
		c.lines[key] = ln
	}
	return ln
}

func (ln *line) enqueue(w *waiter) {
	ln.waiting = hostclock.JoinLine(ln.waiting, w, func(o *waiter) bool { return o.robots })
}

// leave removes w from the line and wakes the new head. It requires c.mu held.
func (ln *line) leave(w *waiter) {
	if i := slices.Index(ln.waiting, w); i >= 0 {
		ln.waiting = slices.Delete(ln.waiting, i, i+1)
		if i == 0 {
			ln.notifyHead()
		}
	}
}

func (ln *line) notifyHead() {
	if len(ln.waiting) > 0 {
		notify(ln.waiting[0])
	}
}

func notify(w *waiter) {
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

// freed wakes the head of key's line: a place was freed, in this process or another.
func (c *Clock) freed(key string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if ln, ok := c.lines[key]; ok {
		ln.notifyHead()
	}
}

// answer is a reply of acquireScript, its times turned into this process's.
type answer struct {
	code    int64
	at      time.Time // granted: when; waiting: when to ask again; refused or peek: the earliest start
	reason  string
	seq     int64
	expired int64
	gaveUp  *hostclock.GiveUpError
}

const (
	codeGranted = iota
	codeWait
	codeTooLong
	codeGaveUp
	codePeek
)

// ask runs acquireScript for ln: mode "grant" or "peek"; since is how long the request has been
// first in line with a place free; deadline is how long until the caller's deadline, or -1;
// waited is how long the request has waited so far, or -1 when it has not (counted in the
// crawl's stats if granted).
func (c *Clock) ask(ctx context.Context, ln *line, mode, id string, robots bool, since, deadline, waited time.Duration) (answer, error) {
	keys := []string{ln.keys.clock, ln.keys.leases, ln.keys.pause, ln.keys.floors, ln.keys.robotsFirst, ln.gaveKey, ln.stats}
	dl := int64(-1)
	if deadline >= 0 {
		dl = deadline.Microseconds()
	}
	var reply []any
	var arrived time.Time
	err := c.s.do(ctx, "asking for a start slot to "+ln.keys.budget, func(ctx context.Context) error {
		var err error
		reply, err = acquireScript.Run(ctx, c.s.client, keys, mode, id, ln.rate, c.cfg.Concurrency, c.cfg.Margin,
			c.cfg.MaxFloor.Microseconds(), flag(robots), since.Microseconds(), c.s.opts.LeaseExpiry.Microseconds(),
			dl, stateTTL.Milliseconds(), c.s.opts.CrawlIdle.Milliseconds(), waited.Microseconds()).Slice()
		arrived = time.Now()
		return err
	})
	if err != nil {
		return answer{}, err
	}
	a := answer{code: toInt(reply, 0)}
	if a.code == codeGaveUp {
		a.gaveUp = &hostclock.GiveUpError{Origin: ln.keys.budget, Reason: toString(reply, 1), At: unixMicro(toInt(reply, 2))}
		return a, nil
	}
	now := toInt(reply, 1)
	switch a.code {
	case codeGranted:
		a.at, a.seq, a.expired = arrived, toInt(reply, 2), toInt(reply, 3)
	case codeWait:
		a.expired = toInt(reply, 4)
		fallthrough
	default:
		a.at, a.reason = local(arrived, now, toInt(reply, 2)), toString(reply, 3)
	}
	return a, nil
}

// Acquire waits for a start slot to key; see [hostclock.Clock].
func (c *Clock) Acquire(ctx context.Context, key string, k kind.Kind) (hostclock.Lease, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	start := time.Now()
	deadline := time.Duration(-1)
	if d, ok := ctx.Deadline(); ok {
		deadline = max(0, time.Until(d))
	}
	c.mu.Lock()
	ln := c.line(key)
	if ln.gaveUp != nil {
		ln.st.Refused++
		err := ln.gaveUp
		c.mu.Unlock()
		return nil, err
	}
	w := &waiter{wake: make(chan struct{}, 1), robots: k == kind.Robots}
	ln.enqueue(w)
	head := ln.waiting[0] == w
	c.mu.Unlock()

	q := &queued{c: c, ln: ln, w: w, key: key, k: k, start: start, phaseAt: start,
		id: c.s.id + strconv.FormatUint(c.nextID.Add(1), 10)}
	defer q.leave()
	if !head && deadline >= 0 {
		// Behind others in this process: the deadline is checked against the origin's rules now,
		// and again once first in line.
		a, err := c.ask(ctx, ln, "peek", "", w.robots, 0, deadline, -1)
		if err != nil {
			return nil, err
		}
		if err := q.refusal(a, ctx); err != nil {
			return nil, err
		}
	}
	since := time.Duration(0) // how long this request has been first in line with a place free
	headAt := time.Time{}
	triedSecond := false // it asked as the second in line; next time it asks as the head
	for {
		c.mu.Lock()
		head = ln.waiting[0] == w
		// While the line flows, the second in line asks beside the head rather than after it: the
		// script decides each ask atomically against the origin's state in Redis, so two asks in
		// flight cannot let more through than the rules allow, and the origin's grants are not
		// held to one round trip each. It asks once; told to wait, it waits as the line does. Not
		// with a robots.txt request among the two, which keeps its place ahead of pages.
		second := !head && !triedSecond && ln.flowing && len(ln.waiting) > 1 && ln.waiting[1] == w &&
			!w.robots && !ln.waiting[0].robots
		if head && ln.flowing && len(ln.waiting) > 1 {
			notify(ln.waiting[1])
		}
		c.mu.Unlock()
		var wait time.Duration
		switch {
		case second:
			triedSecond = true
			if deadline >= 0 {
				d, _ := ctx.Deadline()
				deadline = max(0, time.Until(d))
			}
			a, err := c.ask(ctx, ln, "grant", q.id, false, 0, deadline, q.waited())
			if err != nil {
				return nil, err
			}
			if a.code == codeGranted {
				return q.granted(a), nil
			}
			if err := q.refusal(a, ctx); err != nil {
				return nil, err
			}
			c.count(ln, func(st *hostclock.OriginStats) { st.Expired += a.expired })
			c.mu.Lock()
			ln.flowing = false
			c.mu.Unlock()
			wait = -1 // as the line does: woken when it is first
			q.phase(a.reason)
		case !head:
			// Behind others: this request waits for whatever the head waits for.
			wait = -1
			c.mu.Lock()
			why := cmp.Or(ln.headWhy, hostclock.ReasonRate)
			c.mu.Unlock()
			q.phase(why)
		default:
			if headAt.IsZero() {
				headAt = time.Now()
			}
			if deadline >= 0 {
				d, _ := ctx.Deadline()
				deadline = max(0, time.Until(d))
			}
			a, err := c.ask(ctx, ln, "grant", q.id, w.robots, since+time.Since(headAt), deadline, q.waited())
			if err != nil {
				return nil, err
			}
			c.mu.Lock()
			ln.flowing = a.code == codeGranted
			c.mu.Unlock()
			if a.code == codeGranted {
				return q.granted(a), nil
			}
			if err := q.refusal(a, ctx); err != nil {
				return nil, err
			}
			c.count(ln, func(st *hostclock.OriginStats) { st.Expired += a.expired })
			wait = time.Until(a.at)
			q.phase(a.reason)
			c.mu.Lock()
			ln.headWhy = a.reason
			c.mu.Unlock()
			if a.reason == hostclock.ReasonConcurrency {
				// The place may be freed by another process: listen for it, and ask again at the
				// latest after maxConcurrencyWait.
				q.watch()
				wait = min(wait, maxConcurrencyWait)
				since, headAt = 0, time.Time{}
			}
			if c.testHookWait != nil {
				c.testHookWait(key, k, a.reason)
			}
		}
		if err := q.sleep(ctx, wait); err != nil {
			return nil, fmt.Errorf("redisstore: gave up waiting for a start slot to %s (%s): %w", key, q.why, err)
		}
	}
}

// queued is one Acquire in progress.
type queued struct {
	c     *Clock
	ln    *line
	w     *waiter
	key   string
	k     kind.Kind
	start time.Time
	id    string // the lease's, when granted

	why      string                   // what it waits for now
	phaseAt  time.Time                // since when
	spent    map[string]time.Duration // time waited, by reason
	watching bool
}

// phase notes that the request now waits for why.
func (q *queued) phase(why string) {
	now := time.Now()
	if q.why != "" {
		if q.spent == nil {
			q.spent = map[string]time.Duration{}
		}
		q.spent[q.why] += now.Sub(q.phaseAt)
	}
	q.why, q.phaseAt = why, now
}

// waited is how long the request has waited so far, or -1 when it has not waited yet (ask
// counts a wait in the crawl's stats only then).
func (q *queued) waited() time.Duration {
	if q.spent == nil {
		return -1
	}
	return time.Since(q.start)
}

// sleep waits for wait (forever when negative), a wake-up or the end of ctx.
func (q *queued) sleep(ctx context.Context, wait time.Duration) error {
	if q.spent == nil {
		q.spent = map[string]time.Duration{}
	}
	var fire <-chan time.Time
	if wait >= 0 {
		t := time.NewTimer(wait)
		defer t.Stop()
		fire = t.C
	}
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-fire:
	case <-q.w.wake:
	}
	return nil
}

// watch listens for places freed at the origin, until the request leaves the line.
func (q *queued) watch() {
	if !q.watching {
		q.watching = true
		q.c.wake.watch(q.ln.keys.freed)
	}
}

func (q *queued) leave() {
	q.c.mu.Lock()
	q.ln.leave(q.w)
	q.c.mu.Unlock()
	if q.watching {
		q.c.wake.unwatch(q.ln.keys.freed)
	}
}

// refusal turns a refusing answer into the caller's error, or returns nil for an answer to wait.
func (q *queued) refusal(a answer, ctx context.Context) error {
	c, ln := q.c, q.ln
	switch a.code {
	case codeGaveUp:
		c.mu.Lock()
		ln.gaveUp = a.gaveUp
		ln.st.Refused++
		ln.st.GiveUpReason = a.gaveUp.Reason
		for _, w := range ln.waiting {
			notify(w)
		}
		c.mu.Unlock()
		return a.gaveUp
	case codeTooLong:
		d, _ := ctx.Deadline()
		c.count(ln, func(st *hostclock.OriginStats) { st.TooLong++ })
		c.log.Debug("hostclock: refused, the deadline comes first", "origin", q.key, "reason", a.reason,
			"wait", time.Until(a.at), "deadline_in", time.Until(d))
		return &hostclock.WaitTooLongError{Origin: q.key, Earliest: a.at, Reason: a.reason, Deadline: d,
			Wait: time.Until(a.at), Left: time.Until(d)}
	}
	return nil
}

// granted makes the lease of a granted answer.
func (q *queued) granted(a answer) *lease {
	c, ln := q.c, q.ln
	le := &lease{c: c, ln: ln, id: q.id, seq: a.seq, kind: q.k, renewUntil: a.at.Add(c.cfg.LeaseTTL)}
	le.grant.At = a.at
	if q.spent != nil { // it waited at least once
		q.phase("")
		le.grant.Wait = a.at.Sub(q.start)
		var most time.Duration
		for why, d := range q.spent {
			if d > most {
				most, le.grant.Reason = d, why
			}
		}
		le.grant.Reason = cmp.Or(le.grant.Reason, hostclock.ReasonRate)
	}
	c.mu.Lock()
	ln.leases[le] = struct{}{}
	ln.st.Requests++
	ln.st.Expired += a.expired
	if le.grant.Wait > 0 {
		ln.st.Waits++
		ln.st.Waited += le.grant.Wait
	}
	c.mu.Unlock()
	if le.grant.Wait > 0 && c.log.Enabled(context.Background(), slog.LevelDebug) {
		c.log.Debug("hostclock: waited", "origin", q.key, "kind", string(q.k), "reason", le.grant.Reason, "wait", le.grant.Wait)
	}
	return le
}

// count changes ln's counters under c.mu.
func (c *Clock) count(ln *line, f func(*hostclock.OriginStats)) {
	c.mu.Lock()
	f(&ln.st)
	c.mu.Unlock()
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

// SetFloor records source's Crawl-delay for key; see [hostclock.Clock]. A source's unchanged delay
// is written again only once an hour, so the robots gate may call it for every request.
func (c *Clock) SetFloor(key, source string, interval time.Duration) {
	now := time.Now()
	c.mu.Lock()
	ln := c.line(key)
	prev, had := ln.floors[source]
	if (interval <= 0 && !had) || (had && prev.interval == interval && now.Sub(prev.at) < floorRewrite) {
		c.mu.Unlock()
		return
	}
	c.mu.Unlock()
	var floor int64
	err := c.s.do(context.Background(), "setting the Crawl-delay of "+key, func(ctx context.Context) error {
		var err error
		floor, err = floorScript.Run(ctx, c.s.client, []string{ln.keys.floors}, source, max(0, interval.Microseconds()),
			floorLife.Microseconds(), c.cfg.MaxFloor.Microseconds()).Int64()
		return err
	})
	if err != nil {
		c.log.Error("redisstore: the Crawl-delay could not be recorded; this process keeps asking", "origin", key,
			"source", source, "crawl-delay", interval, "err", err)
		return
	}
	c.mu.Lock()
	switch {
	case interval <= 0:
		delete(ln.floors, source)
	default:
		if ln.floors == nil {
			ln.floors = map[string]floorWrite{}
		}
		ln.floors[source] = floorWrite{interval: interval, at: now}
	}
	ln.st.Floor = time.Duration(floor) * time.Microsecond
	ln.notifyHead()
	c.mu.Unlock()
	if interval > c.cfg.MaxFloor && !(had && prev.interval == interval) {
		c.log.Warn("hostclock: Crawl-delay capped", "origin", key, "source", source, "crawl-delay", interval, "cap", c.cfg.MaxFloor)
	}
}

// Pause keeps every process from starting requests to key before until; see [hostclock.Clock].
func (c *Clock) Pause(key string, until time.Time, reason string) {
	reason = cmp.Or(reason, hostclock.ReasonBackoff)
	c.mu.Lock()
	ln := c.line(key)
	c.mu.Unlock()
	var reply []any
	err := c.s.do(context.Background(), "pausing "+key, func(ctx context.Context) error {
		var err error
		reply, err = pauseScript.Run(ctx, c.s.client, []string{ln.keys.pause, ln.keys.clock},
			time.Until(until).Microseconds(), reason, stateTTL.Milliseconds()).Slice()
		return err
	})
	if err != nil {
		c.log.Error("redisstore: the pause could not be recorded", "origin", key, "until", until, "reason", reason, "err", err)
		return
	}
	if toInt(reply, 0) == 1 {
		c.count(ln, func(st *hostclock.OriginStats) { st.Pauses++ })
		c.log.Info("hostclock: origin paused", "origin", key, "reason", reason, "until", until, "duration", time.Until(until))
	}
}

// Earliest returns when a request to key could be granted if it asked now — the zero time when
// nothing holds it back; see [hostclock.Clock]. It costs one round trip to Redis and waits for
// Redis like Acquire.
func (c *Clock) Earliest(key string) (time.Time, error) {
	c.mu.Lock()
	ln := c.line(key)
	gave := ln.gaveUp
	c.mu.Unlock()
	if gave != nil {
		return time.Time{}, gave
	}
	a, err := c.ask(context.Background(), ln, "peek", "", false, 0, -1, -1)
	if err != nil {
		return time.Time{}, err
	}
	switch {
	case a.code == codeGaveUp:
		return time.Time{}, a.gaveUp
	case a.reason == "":
		return time.Time{}, nil // no rule holds it back: at once
	}
	return a.at, nil
}

// status is what statusScript reports, in this process's time.
type status struct {
	gaveUp       string
	pausedUntil  time.Time
	pauseReason  string
	rate         float64
	floor        time.Duration
	response     time.Duration
	latencySpace time.Duration
}

func (c *Clock) status(ctx context.Context, p redis.Scripter, ln *line) *redis.Cmd {
	// Eval, not EvalSha: Stats pipelines it, where a script the server does not know yet cannot
	// be loaded on the way.
	return statusScript.Eval(ctx, p, []string{ln.keys.clock, ln.keys.pause, ln.keys.floors, ln.gaveKey},
		ln.rate, c.cfg.MaxFloor.Microseconds())
}

func parseStatus(reply []any, arrived time.Time) status {
	now := toInt(reply, 0)
	st := status{gaveUp: toString(reply, 1), pauseReason: toString(reply, 3),
		floor:        time.Duration(toInt(reply, 5)) * time.Microsecond,
		response:     time.Duration(toInt(reply, 6)) * time.Microsecond,
		latencySpace: time.Duration(toInt(reply, 7)) * time.Microsecond}
	st.rate, _ = strconv.ParseFloat(toString(reply, 4), 64)
	if u := toInt(reply, 2); u > now {
		st.pausedUntil = local(arrived, now, u)
	}
	return st
}

// PausedUntil reports the pause in force for key, in every process; see [hostclock.Clock].
func (c *Clock) PausedUntil(key string) (time.Time, string, error) {
	c.mu.Lock()
	ln := c.line(key)
	gave := ln.gaveUp
	c.mu.Unlock()
	if gave != nil {
		return time.Time{}, hostclock.ReasonGiveUp, gave
	}
	var reply []any
	var arrived time.Time
	err := c.s.do(context.Background(), "reading the pause of "+key, func(ctx context.Context) error {
		var err error
		reply, err = c.status(ctx, c.s.client, ln).Slice()
		arrived = time.Now()
		return err
	})
	if err != nil {
		return time.Time{}, "", err
	}
	st := parseStatus(reply, arrived)
	if st.gaveUp != "" {
		return time.Time{}, hostclock.ReasonGiveUp, &hostclock.GiveUpError{Origin: key, Reason: st.gaveUp}
	}
	return st.pausedUntil, st.pauseReason, nil
}

// statsFieldNames are the crawl's counters of an origin in Redis (the stats hash), in the order
// Stats reads them.
var statsFieldNames = []string{"requests", "waits", "waited", "too_many", "unavailable", "server_errors", "transport",
	"pauses", "giveups", "expired", "slowdowns"}

// Stats returns, for every origin this process asked for, the crawl's counters — every process's
// requests, waits, time waited, 429, 503 and other 5xx responses, transport errors, pauses,
// give-ups, reclaimed leases and slowdowns, kept in Redis under the crawl's prefix — and the
// origin's shared rate, floor, response time and pause as Redis holds them now. Refused and
// TooLong count this process's refusals. When Redis cannot be reached every counter is this
// process's own. Sorted by key.
func (c *Clock) Stats() []hostclock.OriginStats {
	c.mu.Lock()
	lines := make([]*line, 0, len(c.lines))
	for _, ln := range c.lines {
		lines = append(lines, ln)
	}
	c.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	cmds := make([]*redis.Cmd, len(lines))
	counts := make([]*redis.SliceCmd, len(lines))
	_, err := c.s.client.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, ln := range lines {
			cmds[i] = c.status(ctx, p, ln)
			counts[i] = p.HMGet(ctx, ln.stats, statsFieldNames...)
		}
		return nil
	})
	arrived := time.Now()
	if err != nil && len(lines) > 0 {
		// A dashboard would see the crawl's counters drop to this process's: say why.
		c.log.Warn("redisstore: Stats could not read the crawl's counters; reporting this process's own", "err", err)
	}
	out := make([]hostclock.OriginStats, len(lines))
	c.mu.Lock()
	for i, ln := range lines {
		out[i] = ln.st
		out[i].Rate = ln.rate
		if err != nil {
			continue
		}
		if reply, err := cmds[i].Slice(); err == nil {
			st := parseStatus(reply, arrived)
			out[i].Rate, out[i].Floor, out[i].ResponseTime, out[i].LatencyInterval = st.rate, st.floor, st.response, st.latencySpace
			out[i].PausedUntil = st.pausedUntil
			if st.gaveUp != "" {
				out[i].GiveUpReason = st.gaveUp
			}
		}
		if v, err := counts[i].Result(); err == nil {
			sharedCounts(&out[i], v)
		}
	}
	c.mu.Unlock()
	slices.SortFunc(out, func(a, b hostclock.OriginStats) int { return cmp.Compare(a.Origin, b.Origin) })
	return out
}

// sharedCounts puts the crawl's counters (HMGET of statsFieldNames) into st.
func sharedCounts(st *hostclock.OriginStats, v []any) {
	n := func(i int) int64 {
		if i < len(v) {
			if s, ok := v[i].(string); ok {
				x, _ := strconv.ParseInt(s, 10, 64)
				return x
			}
		}
		return 0
	}
	st.Requests, st.Waits, st.Waited = n(0), n(1), time.Duration(n(2))*time.Microsecond
	st.TooManyRequests, st.Unavailable, st.ServerErrors, st.TransportErrors = n(3), n(4), n(5), n(6)
	st.Pauses, st.GiveUps, st.Expired, st.Slowdowns = n(7), min(n(8), 1), n(9), n(10)
}

// local turns the server time at (µs) into this process's time, given that the server's clock read
// now (µs) when the reply that arrived at arrived was made.
func local(arrived time.Time, now, at int64) time.Time {
	return arrived.Add(time.Duration(at-now) * time.Microsecond)
}

func unixMicro(us int64) time.Time { return time.UnixMicro(us) }

func flag(b bool) int {
	if b {
		return 1
	}
	return 0
}

// toInt and toString read element i of a script's reply; a reply shorter than expected or of
// another type reads as zero, which the callers treat as "nothing".
func toInt(reply []any, i int) int64 {
	if i < len(reply) {
		if v, ok := reply[i].(int64); ok {
			return v
		}
	}
	return 0
}

func toString(reply []any, i int) string {
	if i < len(reply) {
		if v, ok := reply[i].(string); ok {
			return v
		}
	}
	return ""
}
