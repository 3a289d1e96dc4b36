// What an outcome teaches the clock: 429, 503 and errors pause the origin (429 also lowers its
// rate), successes recover it, a spent error budget gives it up, and every response's time
// feeds the latency interval (latency.go).

package hostclock

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/politecrawl/etiquette/politeness/backoff"
)

const (
	// PenaltyFactor (exported for the description page, which states it) multiplies an origin's rate after each 429.
	PenaltyFactor = 0.5
	// minRateFactor bounds the penalty: repeated 429s lower the rate to no less than 1/8 of the
	// configured one (the pauses keep growing instead).
	minRateFactor = 1.0 / 8
	// RecoverStep multiplies a lowered rate after each run of Config.RecoverAfter successes: from
	// half the rate it takes four runs to recover fully.
	RecoverStep = 1.25
)

// done hands le's place back and applies o; see [Lease].Done. It takes l.mu.
func (l *Local) done(le *lease, o Outcome) {
	now := l.cfg.Time.Now()
	l.mu.Lock()
	s := l.current(le.s, now)
	_, held := s.leases[le] // not held when it expired; its outcome still counts
	if held {
		s.freed(now, l.cfg.Concurrency)
		delete(s.leases, le)
	}
	v := l.learn(s, o, now)
	if v.pause != nil {
		le.caused = v.pause
	}
	// A lease that expired timed the caller's leaked body, not the server.
	if o.Status > 0 && o.Err == nil && s.gaveUp == nil && held {
		le.paced = l.observe(s, now.Sub(cmp.Or(le.sentAt, le.grant.At)))
	}
	paced := le.paced
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
	switch {
	case paced == nil:
	case paced.Slowed:
		log.Info("hostclock: origin slowed down by its response time", "origin", s.key, "response_time", paced.ResponseTime,
			"interval", paced.Interval, "reason", ReasonLatency)
	default:
		log.Info("hostclock: origin back to its budget: its responses are fast again", "origin", s.key,
			"response_time", paced.ResponseTime, "reason", ReasonLatency)
	}
}

// verdict is what one outcome changed.
type verdict struct {
	pause     *Pause
	gaveUp    bool
	recovered bool
}

// Class maps an outcome to its failure class, or 0 for a success; neutral reports an outcome that
// says nothing about the origin (the caller cancelled the request). Every Clock classes outcomes
// this way.
func (o Outcome) Class() (c backoff.Class, neutral bool) {
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
	class, neutral := o.Class()
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
				s.retime(&l.cfg)
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
		s.factor = max(minRateFactor, s.factor*PenaltyFactor)
		s.retime(&l.cfg)
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
	notifyAll(s) // every waiter whose deadline now comes first leaves at once
	return &Pause{Until: until, Reason: why}
}

func (l *Local) giveUp(s *state, now time.Time, reason string) verdict {
	s.gaveUp = &GiveUpError{Origin: s.key, Reason: reason, At: now}
	s.st.GiveUps++
	s.st.GiveUpReason = reason
	return verdict{pause: &Pause{Reason: ReasonGiveUp}, gaveUp: true}
}
