// How a request waits for its start slot: this process's line for the origin, and the asks to
// Redis that decide it.

package redisstore

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strconv"
	"time"

	"github.com/politecrawl/etiquette/politeness/hostclock"
	"github.com/politecrawl/etiquette/politeness/kind"
)

// answer is a reply of acquireScript, its times turned into this process's.
type answer struct {
	code    int64
	at      time.Time // granted: when; waiting: when to ask again; refused or peek: the earliest start
	reason  string
	seq     int64
	expired int64
	gaveUp  *hostclock.GiveUpError
}

// The codes of acquireScript's replies.
const (
	codeGranted = iota
	codeWait
	codeTooLong
	codeGaveUp
	codePeek
	codeLost
)

// acquireArgs are acquireScript's named arguments; its comment says what each means.
type acquireArgs struct {
	Mode         string  `json:"mode"`
	Lease        string  `json:"lease"`
	Rate         float64 `json:"rate"`
	Concurrency  int     `json:"concurrency"`
	Margin       float64 `json:"margin"`
	JitterMargin int64   `json:"jitter_margin"`
	FloorCap     int64   `json:"floor_cap"`
	Robots       bool    `json:"robots"`
	Since        int64   `json:"since"`
	LeaseExpiry  int64   `json:"lease_expiry"`
	Deadline     int64   `json:"deadline"`
	StateTTL     int64   `json:"state_ttl"`
	StatsTTL     int64   `json:"stats_ttl"`
	Waited       int64   `json:"waited"`
	Generation   string  `json:"generation"`
	Fresh        string  `json:"fresh"`
}

// ask runs acquireScript for ln: mode "grant" or "peek"; since is how long the request has been
// first in line with a place free; deadline is how long until the caller's deadline, or -1;
// waited is how long the request has waited so far, or -1 when it has not (counted in the
// crawl's stats if granted). An answer that the origin's state vanished is returned as the
// store's *LostError.
func (c *Clock) ask(ctx context.Context, ln *line, mode, id string, robots bool, since, deadline, waited time.Duration) (answer, error) {
	keys, js, err := c.acquireCall(ln, mode, id, robots, since, deadline, waited)
	if err != nil {
		return answer{}, err
	}
	var reply []any
	var arrived time.Time
	err = c.s.do(ctx, "asking for a start slot to "+ln.keys.budget, func(ctx context.Context) error {
		var err error
		reply, err = acquireScript.Run(ctx, c.s.client, keys, js).Slice()
		arrived = time.Now()
		return err
	})
	if err != nil {
		return answer{}, err
	}
	a := answer{code: toInt(reply, 0)}
	if a.code == codeLost {
		return answer{}, c.s.noteLost(&LostError{URL: c.s.url, Origin: ln.keys.budget, What: "the start schedule"})
	}
	c.learnGeneration(ln, toString(reply, 6), arrived)
	now := toInt(reply, 1)
	switch a.code {
	case codeGaveUp:
		a.gaveUp = &hostclock.GiveUpError{Origin: ln.keys.budget, Reason: toString(reply, 3), At: unixMicro(toInt(reply, 2))}
	case codeGranted:
		a.at, a.seq, a.expired = arrived, toInt(reply, 4), toInt(reply, 5)
	default:
		a.at, a.reason, a.expired = local(arrived, now, toInt(reply, 2)), toString(reply, 3), toInt(reply, 5)
	}
	return a, nil
}

// acquireCall returns acquireScript's keys and arguments for ask.
func (c *Clock) acquireCall(ln *line, mode, id string, robots bool, since, deadline, waited time.Duration) ([]string, []byte, error) {
	keys := []string{ln.keys.clock, ln.keys.leases, ln.keys.pause, ln.keys.floors, ln.keys.robotsFirst, ln.gaveKey, ln.stats,
		ln.keys.generation}
	dl := int64(-1)
	if deadline >= 0 {
		dl = deadline.Microseconds()
	}
	args := acquireArgs{Mode: mode, Lease: id, Rate: ln.rate, Concurrency: c.cfg.Concurrency, Margin: c.cfg.Margin,
		JitterMargin: c.cfg.JitterMargin.Microseconds(), FloorCap: c.cfg.MaxFloor.Microseconds(), Robots: robots,
		Since: since.Microseconds(), LeaseExpiry: c.s.opts.LeaseExpiry.Microseconds(), Deadline: dl,
		StateTTL: stateTTL.Milliseconds(), StatsTTL: c.s.opts.CrawlIdle.Milliseconds(), Waited: waited.Microseconds(),
		Generation: c.generation(ln), Fresh: newGeneration()}
	js, err := json.Marshal(args)
	return keys, js, err
}

// generation returns the generation of ln's state this process relies on, "" when it relies on
// none: it never asked, or not for so long that the state may have expired on its own.
func (c *Clock) generation(ln *line) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if time.Since(ln.genAt) > stateTTL-time.Hour {
		return ""
	}
	return ln.gen
}

// learnGeneration notes the generation an answer that arrived at arrived was given under.
func (c *Clock) learnGeneration(ln *line, gen string, arrived time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	ln.gen, ln.genAt = gen, arrived
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
	q.c.touch(q.ln, q.c.now())
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
	le := &lease{c: c, ln: ln, id: q.id, gen: c.generation(ln), seq: a.seq, kind: q.k, renewUntil: a.at.Add(c.cfg.LeaseTTL)}
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
