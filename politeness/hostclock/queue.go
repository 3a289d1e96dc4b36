// Who goes next at an origin and when: the line of waiting requests (robots.txt first), the
// concurrency cap, and the grant of a slot.

package hostclock

import (
	"cmp"
	"context"
	"fmt"
	"github.com/politecrawl/etiquette/internal/waitline"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/politecrawl/etiquette/politeness/kind"
)

type waiter struct {
	wake   chan struct{} // buffered: a notification is never lost and never blocks
	robots bool
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
	t, why := s.earliest(&l.cfg)
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
	s.queue = waitline.Join(s.queue, w, func(o *waiter) bool { return o.robots })
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
	start := tm.Now()
	s := l.origin(key, start)
	if s.gaveUp != nil {
		s.st.Refused++
		err := s.gaveUp
		l.mu.Unlock()
		return nil, err
	}
	if err := l.tooLong(ctx, s, start); err != nil {
		l.mu.Unlock()
		return nil, err
	}
	if len(s.queue) == 0 {
		if wait, _ := l.check(s, start); wait == 0 {
			// Nobody in line and every rule allows a start now: the request is first in line
			// from now, and its grant is the same as after joining the line, without the line.
			s.headSince = start
			return l.grant(s, nil, k, start, start, nil), nil
		}
	}
	w := &waiter{wake: make(chan struct{}, 1), robots: k == kind.Robots}
	s.enqueue(w, start)
	if l.testHookEnqueue != nil {
		l.testHookEnqueue()
	}
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
		if err := l.tooLong(ctx, s, now); err != nil {
			// A pause or a floor set while it waited moved the earliest start past its deadline.
			s.remove(w)
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

// tooLong returns the refusal of a request whose deadline falls before the earliest start the
// clock knows of for s (schedule, floor, pause; not the line or the concurrency cap, whose waits
// are unknown), or nil. A context's deadline is on the runtime's clock, the schedule on the
// clock's Time, so the two are compared as durations from their own now. It requires l.mu held.
func (l *Local) tooLong(ctx context.Context, s *state, now time.Time) error {
	deadline, ok := ctx.Deadline()
	if !ok {
		return nil
	}
	at, why := s.earliest(&l.cfg)
	wait, left := at.Sub(now), time.Until(deadline)
	if wait <= left {
		return nil
	}
	s.st.TooLong++
	err := &WaitTooLongError{Origin: s.key, Earliest: at, Reason: why, Deadline: deadline, Wait: wait, Left: left}
	l.logger().Debug("hostclock: refused, the deadline comes first", "origin", s.key, "reason", why, "wait", wait, "deadline_in", left)
	return err
}

// grant hands the slot to w, the head of s's queue, or to a request that never joined an empty
// queue (w nil). It requires l.mu held and releases it.
func (l *Local) grant(s *state, w *waiter, k kind.Kind, start, now time.Time, spent map[string]time.Duration) *lease {
	// The start was due when the rules first allowed it and the request was first in line with a
	// place free. The next theoretical start counts from there, not from now: a start that a busy
	// machine granted late does not push back every later one (the window rule in earliest still
	// keeps the catching-up within the rate), and an idle origin does not bank the time it was
	// idle as a burst.
	due, _ := s.earliest(&l.cfg)
	due = later(due, s.headSince)
	if due.IsZero() || due.After(now) {
		due = now
	}
	if s.pauseUntil.After(s.last) {
		// The first start after a pause restarts the schedule from itself: the site's operator
		// sees it no sooner than the pause's end and the next one a whole interval after it, even
		// when a busy machine granted it late. Catching up is for a schedule that ran, not for one
		// the site stopped.
		due = now
	}
	if w != nil {
		s.queue = s.queue[1:]
	}
	s.headSince = now
	seq := s.started(now, due, &l.cfg)
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
	caused  *Pause    // guarded by l.mu
	paced   *Pace     // guarded by l.mu
	sentAt  time.Time // the first Sent; guarded by l.mu
}

func (le *lease) Grant() Grant { return le.grant }

func (le *lease) Sent() {
	now := le.l.cfg.Time.Now()
	le.l.mu.Lock()
	if le.s.forgotten { // it expired long ago; its sequence number means nothing to a new state
		le.l.mu.Unlock()
		return
	}
	le.s.sent(le.seq, now)
	if le.sentAt.IsZero() {
		le.sentAt = now
	}
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

func (le *lease) Paced() (Pace, bool) {
	le.l.mu.Lock()
	defer le.l.mu.Unlock()
	if le.paced == nil {
		return Pace{}, false
	}
	return *le.paced, true
}
