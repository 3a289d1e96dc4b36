// The test harness: a manual Time that moves only when a test says so, and helpers that take
// start slots on it without sleeping.

package hostclock

import (
	"context"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/politecrawl/etiquette/politeness/kind"
)

// manual is a Time that only moves when the test says so. It reports on changed whenever a timer
// is set or stopped, so helpers wait for the clock's goroutines by channel, never by sleeping.
type manual struct {
	mu      sync.Mutex
	now     time.Time
	timers  map[*manualTimer]struct{} // set, not yet fired
	fired   map[*manualTimer]struct{} // fired, not yet stopped by the goroutine it woke
	changed chan struct{}             // buffered 1: a report is never lost and never blocks
}

type manualTimer struct {
	m  *manual
	at time.Time
	c  chan time.Time
}

var epoch = time.Date(2026, time.November, 30, 1, 0, 0, 0, time.UTC)

func newManual() *manual {
	return &manual{now: epoch, timers: map[*manualTimer]struct{}{}, fired: map[*manualTimer]struct{}{},
		changed: make(chan struct{}, 1)}
}

func (m *manual) report() {
	select {
	case m.changed <- struct{}{}:
	default:
	}
}

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
	m.report()
	return t
}

func (t *manualTimer) C() <-chan time.Time { return t.c }

// Stop also acknowledges a fired timer: the clock stops every timer once its wait is over, so a
// fired timer not yet stopped is a goroutine that has not caught up with the time.
func (t *manualTimer) Stop() bool {
	t.m.mu.Lock()
	defer t.m.mu.Unlock()
	_, ok := t.m.timers[t]
	delete(t.m.timers, t)
	delete(t.m.fired, t)
	t.m.report()
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
			m.fired[t] = struct{}{}
		}
	}
}

// next returns how far ahead the earliest pending timer is, once every goroutine woken by a
// timer has caught up.
func (m *manual) next() (time.Duration, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.fired) > 0 {
		return 0, false
	}
	var first time.Time
	for t := range m.timers {
		if first.IsZero() || t.at.Before(first) {
			first = t.at
		}
	}
	return first.Sub(m.now), !first.IsZero()
}

// failsafe bounds every wait of the helpers, so a broken clock fails its test instead of hanging
// the suite; it is never what a test waits for.
const failsafe = 10 * time.Second

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

// await lets simulated time pass, timer by timer, until ch delivers. Only simulated time moves: the
// grant times are exact whatever the machine's load.
func await[T any](t *testing.T, m *manual, ch <-chan T) T {
	t.Helper()
	stop := time.NewTimer(failsafe)
	defer stop.Stop()
	for {
		if d, ok := m.next(); ok {
			m.Advance(d)
		}
		select {
		case r := <-ch:
			return r
		case <-m.changed:
		case <-stop.C:
			t.Fatal("no result (and no pending timer to advance)")
		}
	}
}

// receive waits for ch without moving simulated time.
func receive[T any](t *testing.T, ch <-chan T) T {
	t.Helper()
	stop := time.NewTimer(failsafe)
	defer stop.Stop()
	select {
	case v := <-ch:
		return v
	case <-stop.C:
		t.Fatal("no result without simulated time passing")
	}
	var zero T
	return zero
}

// blocked waits until some goroutine sits on a timer, so the test knows a waiter is in place, and
// returns how far ahead that timer is.
func blocked(t *testing.T, m *manual) time.Duration {
	t.Helper()
	stop := time.NewTimer(failsafe)
	defer stop.Stop()
	for {
		if d, ok := m.next(); ok {
			return d
		}
		select {
		case <-m.changed:
		case <-stop.C:
			t.Fatal("no waiter blocked on a timer")
		}
	}
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

// newTestLocal returns a clock on manual time that reports every request joining a line on the
// manual clock's changed channel.
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
	l.testHookEnqueue = m.report
	return l, m
}

// waitQueue waits until n requests are in key's line.
func waitQueue(t *testing.T, m *manual, l *Local, key string, n int) {
	t.Helper()
	stop := time.NewTimer(failsafe)
	defer stop.Stop()
	for {
		l.mu.Lock()
		q := 0
		if s, ok := l.origins[key]; ok {
			q = len(s.queue)
		}
		l.mu.Unlock()
		if q == n {
			return
		}
		select {
		case <-m.changed:
		case <-stop.C:
			t.Fatalf("the line of %s never reached %d (it holds %d)", key, n, q)
		}
	}
}

// botSource names a robots.txt and a token asking for a Crawl-delay, as the door's robots gate does.
const botSource = "https://a.example:443 ExampleBot"
