// What the shared clock is told besides starts — Crawl-delay floors and pauses — and what it
// reports: the earliest start, the pause in force and the crawl's counters.

package redisstore

import (
	"cmp"
	"context"
	"slices"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/politecrawl/etiquette/politeness/hostclock"
)

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
