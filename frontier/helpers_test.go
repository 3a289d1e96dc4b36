package frontier

import (
	"context"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/politecrawl/etiquette/politeness/hostclock"
)

// manualTime is a hostclock.Time that moves only when a test advances it.
type manualTime struct {
	mu     sync.Mutex
	now    time.Time
	timers []*manualTimer
}

type manualTimer struct {
	at time.Time
	c  chan time.Time
}

func (t *manualTimer) C() <-chan time.Time { return t.c }
func (t *manualTimer) Stop() bool          { return true }

var epoch = time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)

func newManualTime() *manualTime { return &manualTime{now: epoch} }

func (m *manualTime) Now() time.Time {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.now
}

func (m *manualTime) NewTimer(d time.Duration) hostclock.Timer {
	m.mu.Lock()
	defer m.mu.Unlock()
	t := &manualTimer{at: m.now.Add(d), c: make(chan time.Time, 1)}
	if d <= 0 {
		t.c <- m.now
	} else {
		m.timers = append(m.timers, t)
	}
	return t
}

// Advance moves the time on by d and fires every timer that is due.
func (m *manualTime) Advance(d time.Duration) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.now = m.now.Add(d)
	keep := m.timers[:0]
	for _, t := range m.timers {
		if t.at.After(m.now) {
			keep = append(keep, t)
			continue
		}
		t.c <- m.now
	}
	m.timers = keep
}

// fakePacer answers Earliest from a table a test sets; an origin it does not know may start now.
type fakePacer struct {
	mu    sync.Mutex
	at    map[string]time.Time
	err   map[string]error
	asked []string
}

func newFakePacer() *fakePacer {
	return &fakePacer{at: map[string]time.Time{}, err: map[string]error{}}
}

func (p *fakePacer) Earliest(key string) (time.Time, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.asked = append(p.asked, key)
	return p.at[key], p.err[key]
}

func (p *fakePacer) set(key string, at time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.at[key] = at
}

func (p *fakePacer) fail(key string, err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.err[key] = err
}

// testFrontier is a frontier on manual time whose Next reports when it goes to sleep.
type testFrontier struct {
	*Frontier
	tm    *manualTime
	waits chan struct{}
}

func newTestFrontier(t *testing.T, opts Options) *testFrontier {
	t.Helper()
	tm := newManualTime()
	opts.Time = tm
	opts.Logger = slog.New(slog.DiscardHandler)
	f, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	tf := &testFrontier{Frontier: f, tm: tm, waits: make(chan struct{}, 64)}
	f.onWait = func() { tf.waits <- struct{}{} }
	return tf
}

func (tf *testFrontier) push(t *testing.T, urls ...string) {
	t.Helper()
	for _, u := range urls {
		if _, err := tf.Push(Entry{URL: u, Depth: 1, Via: ViaStart}); err != nil {
			t.Fatalf("Push(%q): %v", u, err)
		}
	}
}

// next calls Next and fails the test unless it returns at once with an item.
func (tf *testFrontier) next(t *testing.T) Item {
	t.Helper()
	tf.forgetWaits()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	got := tf.nextAsync(ctx)
	select {
	case r := <-got:
		if r.err != nil {
			t.Fatalf("Next: %v", r.err)
		}
		return r.it
	case <-tf.waits:
		cancel()
		<-got
		t.Fatal("Next waited; want an item at once")
	}
	return Item{}
}

// forgetWaits empties the record of sleeps of Next calls that have returned since.
func (tf *testFrontier) forgetWaits() {
	for len(tf.waits) > 0 {
		<-tf.waits
	}
}

type nextResult struct {
	it  Item
	err error
}

func (tf *testFrontier) nextAsync(ctx context.Context) <-chan nextResult {
	out := make(chan nextResult, 1)
	go func() {
		it, err := tf.Next(ctx)
		out <- nextResult{it, err}
	}()
	return out
}

// waiting starts Next and returns its result channel once Next has gone to sleep.
func (tf *testFrontier) waiting(t *testing.T) <-chan nextResult {
	t.Helper()
	tf.forgetWaits()
	got := tf.nextAsync(context.Background())
	select {
	case r := <-got:
		t.Fatalf("Next returned %q, %v; want it to wait", r.it.URL, r.err)
	case <-tf.waits:
	}
	return got
}

// result waits for a Next started by waiting to return.
func result(t *testing.T, got <-chan nextResult) nextResult {
	t.Helper()
	select {
	case r := <-got:
		return r
	case <-time.After(10 * time.Second):
		t.Fatal("Next did not return")
	}
	return nextResult{}
}
