package hostclock

import (
	"context"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/politecrawl/etiquette/politeness/kind"
)

// manual is a Time that only moves when the test says so.
type manual struct {
	mu     sync.Mutex
	now    time.Time
	timers map[*manualTimer]struct{}
}

type manualTimer struct {
	m  *manual
	at time.Time
	c  chan time.Time
}

var epoch = time.Date(2026, time.November, 30, 1, 0, 0, 0, time.UTC)

func newManual() *manual { return &manual{now: epoch, timers: map[*manualTimer]struct{}{}} }

func (m *manual) Now() time.Time {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.now
}

func (m *manual) NewTimer(d time.Duration) Timer {
	m.mu.Lock()
	defer m.mu.Unlock()
	t := &manualTimer{m: m, at: m.now.Add(d), c: make(chan time.Time, 1)}
	if d <= 0 {
		t.c <- m.now
	} else {
		m.timers[t] = struct{}{}
	}
	return t
}

func (t *manualTimer) C() <-chan time.Time { return t.c }

func (t *manualTimer) Stop() bool {
	t.m.mu.Lock()
	defer t.m.mu.Unlock()
	_, ok := t.m.timers[t]
	delete(t.m.timers, t)
	return ok
}

// Advance moves the time on by d and fires the timers that are due.
func (m *manual) Advance(d time.Duration) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.now = m.now.Add(d)
	for t := range m.timers {
		if !t.at.After(m.now) {
			t.c <- m.now
			delete(m.timers, t)
		}
	}
}

// next returns how far ahead the earliest pending timer is.
func (m *manual) next() (time.Duration, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var first time.Time
	for t := range m.timers {
		if first.IsZero() || t.at.Before(first) {
			first = t.at
		}
	}
	return first.Sub(m.now), !first.IsZero()
}

type result struct {
	lease Lease
	err   error
}

func acquireAsync(l *Local, ctx context.Context, key string, k kind.Kind) <-chan result {
	ch := make(chan result, 1)
	go func() {
		le, err := l.Acquire(ctx, key, k)
		ch <- result{le, err}
	}()
	return ch
}

// await lets time pass, timer by timer, until ch delivers. Only simulated time moves: the grant
// times are exact whatever the machine's load.
func await(t *testing.T, m *manual, ch <-chan result) result {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case r := <-ch:
			return r
		default:
		}
		if d, ok := m.next(); ok {
			m.Advance(d)
		}
		time.Sleep(50 * time.Microsecond)
	}
	t.Fatal("Acquire did not return (no pending timer to advance)")
	return result{}
}

// blocked waits until some goroutine sits on a timer, so the test knows a waiter is in place.
func blocked(t *testing.T, m *manual) time.Duration {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if d, ok := m.next(); ok {
			return d
		}
		time.Sleep(50 * time.Microsecond)
	}
	t.Fatal("no waiter blocked on a timer")
	return 0
}

// acquire takes a slot, advancing simulated time as needed.
func acquire(t *testing.T, m *manual, l *Local, key string) Lease {
	t.Helper()
	r := await(t, m, acquireAsync(l, context.Background(), key, kind.HTML))
	if r.err != nil {
		t.Fatalf("Acquire(%s): %v", key, r.err)
	}
	return r.lease
}

func newTestLocal(t *testing.T, cfg Config) (*Local, *manual) {
	t.Helper()
	m := newManual()
	cfg.Time = m
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Rand == nil {
		cfg.Rand = func() float64 { return 0 }
	}
	l, err := NewLocal(cfg)
	if err != nil {
		t.Fatalf("NewLocal: %v", err)
	}
	return l, m
}
